// The page's session: where the service is (/config.json), the user's key (kept in this
// browser's localStorage — the key IS the account), the typed API client signing with it, and
// the surfaces' state (trading / LP / WebSocket) that the banners show.
import { signal } from "@preact/signals"
import { ApiClient } from "../../src/client/index.ts"
import { exportSecretHex, generateKey, importSecret, type UserKey } from "../../src/client/index.ts"
import { describeError, type ErrorBody } from "./errors.ts"
import type { WebConfig } from "./web-config.ts"

export type { WebConfig } from "./web-config.ts"

const KEY_STORAGE = "twinbook.key.v1"

export const config = signal<WebConfig | null>(null)
export const key = signal<UserKey | null>(null)
export const client = signal<ApiClient | null>(null)
export const registered = signal(false)
export const surfaces = signal<{ trading: "open" | "closed" | "paused" | "unknown"; lp: "open" | "closed" | "unknown" }>({ trading: "unknown", lp: "unknown" })
export const wsState = signal<"connecting" | "open" | "down">("connecting")
export const toast = signal<{ kind: "ok" | "error"; text: string } | null>(null)

export const notify = (kind: "ok" | "error", text: string): void => {
  toast.value = { kind, text }
}

/** Bumped on every navigation (main.tsx), which also clears the toast. */
let pageGeneration = 0
export const pageChanged = (): void => {
  pageGeneration++
  toast.value = null
}
/**
 * A notify for an action started now that stays quiet if the person has left the page by the
 * time the action ends (an order answered or a wallet receipt after navigating away): a toast
 * belongs to the page it was raised on, not over the next page's content.
 */
export const notifyHere = (): typeof notify => {
  const gen = pageGeneration
  return (kind, text) => {
    if (gen === pageGeneration) notify(kind, text)
  }
}

/** /config.json from web/server.ts; under `npm run web:dev` the Vite proxy makes the page's own origin the API. */
export const loadConfig = async (): Promise<WebConfig> => {
  try {
    const res = await fetch("/config.json", { cache: "no-store" })
    if (res.ok) return (await res.json()) as WebConfig
  } catch {
    // fall through to the dev-proxy defaults
  }
  const origin = location.origin
  return { api_url: origin, ws_url: `${origin.replace(/^http/, "ws")}/v1/ws`, deposit_url: origin, chain_rpc_url: null, chain_id: null, token_address: null, faucet: false }
}

// The client sends fetch's credentials "include": the HttpOnly session cookie rides along (same site, another port).
const makeClient = (k: UserKey): ApiClient => {
  const c = config.value!
  return new ApiClient(c.api_url, k, undefined, undefined, c.deposit_url === null ? {} : { depositUrl: c.deposit_url })
}

export const restoreKey = (): void => {
  const stored = localStorage.getItem(KEY_STORAGE)
  if (stored === null) return
  try {
    useKey(importSecret(stored))
  } catch {
    localStorage.removeItem(KEY_STORAGE)
  }
}

const useKey = (k: UserKey): void => {
  key.value = k
  client.value = makeClient(k)
  registered.value = false
}

/** Registers (idempotent): sets the session cookie for this key. Returns an error text or null. */
export const register = async (): Promise<string | null> => {
  const c = client.value
  if (c === null) return "No key."
  try {
    const res = await c.register("web")
    if (res.status !== 200) return describeError(res.status, res.body as ErrorBody)
    registered.value = true
    return null
  } catch {
    return describeError(0, { error: "network_error" })
  }
}

export const createAccount = async (): Promise<string | null> => {
  const k = generateKey()
  localStorage.setItem(KEY_STORAGE, exportSecretHex(k))
  useKey(k)
  return register()
}

export const importAccount = async (text: string): Promise<string | null> => {
  let k: UserKey
  try {
    k = importSecret(text)
  } catch (err) {
    return err instanceof Error ? err.message : String(err)
  }
  localStorage.setItem(KEY_STORAGE, exportSecretHex(k))
  useKey(k)
  return register()
}

/** Forgets the key in this browser. The session cookie is HttpOnly: it stays until it expires, but without the key nothing can be signed. */
export const signOut = (): void => {
  localStorage.removeItem(KEY_STORAGE)
  key.value = null
  client.value = null
  registered.value = false
}

/** Notes a surface's state from any answer the page gets (403 trading_disabled, 202 queued, lp_disabled). */
export const noteSurface = (status: number, body: unknown): void => {
  const code = (body as ErrorBody | null)?.error
  const s = surfaces.value
  if (code === "trading_disabled") surfaces.value = { ...s, trading: "closed" }
  else if (code === "lp_disabled") surfaces.value = { ...s, lp: "closed" }
  else if (status === 202 && (body as { status?: string } | null)?.status === "queued") surfaces.value = { ...s, trading: "paused" }
}
export const noteTradingOpen = (): void => {
  if (surfaces.value.trading !== "open") surfaces.value = { ...surfaces.value, trading: "open" }
}
export const noteLpOpen = (): void => {
  if (surfaces.value.lp !== "open") surfaces.value = { ...surfaces.value, lp: "open" }
}

/** GET a public read; throws an Error with the words of the failure. */
export const getJson = async <T,>(url: string): Promise<T> => {
  let res: Response
  try {
    res = await fetch(url, { credentials: "include", cache: "no-store" })
  } catch {
    throw new Error(describeError(0, { error: "network_error" }))
  }
  const body = (await res.json().catch(() => null)) as unknown
  if (!res.ok) throw new Error(describeError(res.status, body as ErrorBody))
  return body as T
}

export const apiUrl = (path: string): string => `${config.value!.api_url}${path}`
export const depositUrl = (path: string): string => `${config.value!.deposit_url ?? config.value!.api_url}${path}`
