// The session group (SPEC §5.1): POST /v1/builders/register, the session bootstrap.
import { parseSignatureHex, verifyUser } from "../../auth/ed25519.ts"
import { sessionMessage } from "../../auth/messages.ts"
import { REGISTER_SKEW_SEC } from "../../auth/session-proofs.ts"
import { issueSessionCookie, sessionSetCookie } from "../../auth/session-cookie.ts"
import { ApiError } from "../../domain/errors.ts"
import { API } from "../declaration/api.ts"
import { apiKeyFor, type AppCtx, requireFreshTimestamp, requireUserKey, wallSec } from "../context.ts"
import { json } from "../http.ts"
import { implement } from "../serve.ts"

export const session = implement<AppCtx>()(API.session, {
  register: async (ctx, { body, req }) => {
    requireUserKey("user", body.user, "invalid_shape")
    requireFreshTimestamp(ctx, req, body.timestamp, REGISTER_SKEW_SEC)
    const now = wallSec(ctx)
    const signature = parseSignatureHex(body.signature)
    if (signature === null) throw new ApiError("invalid_signature_format", "signature must be 64 bytes, hex-encoded without 0x")
    if (!verifyUser(body.user, sessionMessage(body.user, body.timestamp), signature)) {
      throw new ApiError("invalid_signature", "signature does not verify for this user and timestamp")
    }
    // Single-use, here and on the `user:` channel (docs/decisions.md): a proof seen once cannot mint a cookie again.
    if (!ctx.sessionProofs.claim(body.user, body.timestamp)) {
      ctx.log?.({ event: "session_proof_reused", ip: req.ip, path: req.path, user: body.user })
      throw new ApiError("invalid_signature", "this signature was already used: a session proof is accepted once; sign a fresh timestamp")
    }
    const apiKey = apiKeyFor(ctx.secret, body.user)
    await ctx.commands.submit({ type: "register_builder", user: body.user, name: body.name, apiKey })
    const cookie = issueSessionCookie(ctx.secret, body.user, now)
    return json(200, { api_key: apiKey }, { "set-cookie": sessionSetCookie(cookie, ctx.config.secureCookies) })
  }
})
