// Linking a user key to its EVM wallet (an extension; docs/api.md "Wallet link"):
// deposits to the wallet's deposit address credit the user, withdrawals go only to it.
import { parseSignatureHex, verifyUser } from "../../auth/ed25519.ts"
import { verifyEvmMessage } from "../../auth/evm.ts"
import { walletLinkMessage } from "../../auth/messages.ts"
import { normalizeAddress } from "../../chain/chain.ts"
import { ApiError } from "../../domain/errors.ts"
import { decodeBody, WalletLinkRequest } from "../../domain/schemas.ts"
import { anonymousWriteLimit, type AppCtx, requireFreshTimestamp, requireUserKey } from "../context.ts"
import { json, parseJsonBody, type Route } from "../http.ts"

const MAX_SKEW_SEC = 60
const decodeLink = decodeBody(WalletLinkRequest, "invalid_shape")

export const walletRoutes: ReadonlyArray<Route<AppCtx>> = [
  {
    method: "POST",
    path: "/v1/wallet/link",
    handler: async (ctx, req) => {
      // Like registration, and no registration needed first (docs/decisions.md "Rate limits").
      ctx.limiter.takeForAddress(anonymousWriteLimit(ctx.config, "ip_wallet_link"), req.ip)
      const body = decodeLink(parseJsonBody(req))
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
    }
  },
  {
    method: "GET",
    path: "/v1/wallet/:user",
    handler: (ctx, _req, params) => {
      const user = params.user!
      requireUserKey("user", user, "invalid_pubkey")
      const wallet = ctx.exchange.walletOfUser.get(user)
      if (wallet === undefined) throw new ApiError("not_found", "no wallet linked to this user")
      return json(200, { user, wallet }, { "cache-control": "no-store", "x-cache": "MISS" })
    }
  }
]
