// Sign in: create or import an Ed25519 key, register, who am I, back the key up, sign out.
import { useState } from "preact/hooks"
import { exportSecretHex } from "../../../src/client/keys.ts"
import { isBotRunning, stopBrowserBot } from "../bot/browser-bot.ts"
import { createAccount, importAccount, key, notifyHere, register, registered, signOut } from "../session.ts"

const KeyWarning = () => (
  <div class="callout" data-testid="key-warning">
    <strong>Your key is your account.</strong> There is no password and no recovery: whoever holds this key can trade and
    withdraw, and if you lose it the funds are gone. It is stored only in this browser. Export a backup and keep it offline;
    never paste it into another site.
  </div>
)

// One piece: a page component: its hooks, then its markup top to bottom.
export const AccountPage = () => {
  const k = key.value
  const [importText, setImportText] = useState("")
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const [shown, setShown] = useState(false)

  const run = async (f: () => Promise<string | null>) => {
    const notify = notifyHere()
    setBusy(true)
    setError(null)
    const e = await f()
    setBusy(false)
    if (e !== null) setError(e)
    else notify("ok", "Signed in.")
  }

  if (k === null) {
    return (
      <section class="narrow">
        <h1>Sign in</h1>
        <KeyWarning />
        <div class="card">
          <h2>New here</h2>
          <p>Create a new Ed25519 key in this browser and register it with the exchange.</p>
          <button class="btn primary" disabled={busy} onClick={() => run(createAccount)} data-testid="create-key">
            Create account key
          </button>
        </div>
        <div class="card">
          <h2>I have a key</h2>
          <label>
            Secret key backup (64 hex characters or base58)
            <textarea rows={2} value={importText} onInput={(e) => setImportText((e.target as HTMLTextAreaElement).value)} data-testid="import-text" spellcheck={false} />
          </label>
          <button class="btn" disabled={busy || importText.trim() === ""} onClick={() => run(() => importAccount(importText))} data-testid="import-key">
            Import key
          </button>
        </div>
        {error !== null && <p class="error" data-testid="account-error">{error}</p>}
      </section>
    )
  }

  const backup = exportSecretHex(k)
  const download = () => {
    const blob = new Blob([`twinbook secret key (the key IS the account; keep offline)\nuser: ${k.user}\nsecret: ${backup}\n`], { type: "text/plain" })
    const a = document.createElement("a")
    a.href = URL.createObjectURL(blob)
    a.download = `twinbook-key-${k.user.slice(0, 8)}.txt`
    a.click()
    URL.revokeObjectURL(a.href)
  }
  return (
    <section class="narrow">
      <h1>Account</h1>
      <div class="card">
        <div class="kv">
          <span>You are</span>
          <code class="wrap" data-testid="whoami">{k.user}</code>
          <span>Session</span>
          <span data-testid="session-state">{registered.value ? "registered — signed in" : "not registered yet"}</span>
        </div>
        {!registered.value && (
          <button class="btn primary" onClick={() => run(register)} disabled={busy}>
            Register
          </button>
        )}
      </div>
      <KeyWarning />
      <div class="card">
        <h2>Back up your key</h2>
        {shown ? <code class="wrap secret" data-testid="secret">{backup}</code> : <p class="muted">Hidden. Anyone who sees it owns the account.</p>}
        <div class="row">
          <button class="btn" onClick={() => setShown(!shown)} data-testid="show-secret">{shown ? "Hide" : "Show secret key"}</button>
          <button class="btn" onClick={download} data-testid="download-backup">Download backup file</button>
        </div>
      </div>
      <div class="card">
        <h2>Sign out</h2>
        <p class="muted">Removes the key from this browser (a running in-browser bot is stopped first and its quotes cancelled). Without a backup you cannot sign in again.</p>
        <button
          class="btn danger"
          onClick={async () => {
            if (!confirm("Remove the key from this browser? Make sure you have a backup.")) return
            // The bot signs with this key: stop it (cancelling its quotes) before the key is gone.
            if (isBotRunning()) await stopBrowserBot()
            signOut()
          }}
          data-testid="sign-out"
        >
          Sign out
        </button>
      </div>
      {error !== null && <p class="error">{error}</p>}
    </section>
  )
}
