// The meta and feed groups: the OpenAPI document and the docs page about the API itself
// (src/api/openapi.ts renders both), and GET /v1/ws answered without an upgrade (the WebSocket
// itself is taken over by src/api/node-server.ts before routing).
import { ApiError } from "../../domain/errors.ts"
import type { AppCtx } from "../context.ts"
import { API, declaredApi } from "../declaration/api.ts"
import { documentHandler, docsPage } from "../openapi.ts"
import { implement } from "../serve.ts"

export const meta = implement<AppCtx>()(API.meta, {
  openapi: documentHandler(declaredApi),
  docs: async () => ({ status: 200, headers: { "content-type": "text/html; charset=utf-8" }, body: await docsPage() })
})

export const feed = implement<AppCtx>()(API.feed, {
  ws: () => {
    throw new ApiError("upgrade_required", "GET /v1/ws upgrades to a WebSocket: send Connection: Upgrade and Upgrade: websocket")
  }
})
