// The wallet group: linking a user key to its EVM wallet (an extension; docs/api.md "Wallet
// link"), the link's read, and the signed withdrawal to it (SPEC §4 "Withdraw", §5.8; the use
// case is src/usecase/withdraw.ts). Deposits to the wallet's deposit address credit the user.
import { parseSignatureHex, verifyUser } from "../../auth/ed25519.ts"
import { verifyEvmMessage } from "../../auth/evm.ts"
import { walletLinkMessage } from "../../auth/messages.ts"
import { normalizeAddress } from "../../chain/chain.ts"
import { ApiError } from "../../domain/errors.ts"
import { withdraw } from "../../usecase/withdraw.ts"
import { API } from "../declaration/api.ts"
import { type AppCtx, requireFreshTimestamp, requireUserKey } from "../context.ts"
import { json } from "../http.ts"
import { implement } from "../serve.ts"

const MAX_SKEW_SEC = 60

export const wallet = implement<AppCtx>()(API.wallet, {
  withdraw: async (ctx, { body, session, raw }) => {
    requireUserKey("user", body.user, "invalid_shape")
    if (body.user !== session) throw new ApiError("session_user_mismatch", "withdraw user differs from the session user")
    // The decoded body drops unknown fields: a session_pub is looked for in the raw one.
    return json(200, await withdraw(ctx, { ...body, session_pub: raw.session_pub }))
  },
  link: async (ctx, { body, req }) => {
    requireUserKey("user", body.user, "invalid_shape")
    const wallet = normalizeAddress(body.wallet)
    if (wallet === null) throw new ApiError("invalid_address", "wallet: 0x followed by 40 hex characters")
    requireFreshTimestamp(ctx, req, body.timestamp, MAX_SKEW_SEC)
    const signature = parseSignatureHex(body.signature)
    if (signature === null || !/^0x[0-9a-fA-F]{130}$/.test(body.evm_signature)) {
      throw new ApiError("invalid_signature_format", "signature: 64 bytes hex without 0x; evm_signature: 65 bytes 0x-hex")
    }
    const message = walletLinkMessage(body.user, wallet, body.timestamp)
    const evmOk = verifyEvmMessage(wallet, message, body.evm_signature)
    if (!verifyUser(body.user, Buffer.from(message, "utf8"), signature) || !evmOk) {
      throw new ApiError("invalid_signature", "both keys must sign the wallet-link message")
    }
    const { result } = await ctx.commands.submit({ type: "link_wallet", user: body.user, wallet })
    if (result.refused === "wallet_already_linked") throw new ApiError("wallet_already_linked", "this user is linked to another wallet")
    if (result.refused === "wallet_taken") throw new ApiError("wallet_taken", "this wallet is linked to another user")
    return json(200, { user: body.user, wallet })
  },
  get: (ctx, { path }) => {
    const wallet = ctx.exchange.walletOfUser.get(path.user)
    if (wallet === undefined) throw new ApiError("not_found", "no wallet linked to this user")
    return json(200, { user: path.user, wallet }, { "cache-control": "no-store", "x-cache": "MISS" })
  }
})
