// The OpenAPI documents and the docs page, all generated from the API's declaration
// (src/api/declaration/api.ts) by `@effect/platform`: OpenApi.fromApi for the documents,
// HttpApiSwagger for the page (Swagger UI with its script and styles inlined: the page
// works offline, and the service has no CDN to reach).
import { HttpApiSwagger, HttpLayerRouter, OpenApi } from "@effect/platform"
import type { HttpApi } from "@effect/platform"
import { ApiError } from "../domain/errors.ts"
import type { AppCtx } from "./context.ts"
import { Api } from "./declaration/api.ts"
import { json, type HttpResponse, type Route } from "./http.ts"

/** The OpenAPI 3.1 document of a declared API (cached by the generator). */
export const openApiDocument = (api: HttpApi.HttpApi.Any = Api): Record<string, unknown> =>
  OpenApi.fromApi(api as never) as unknown as Record<string, unknown>

/** A JSON response of a document, serialised once. */
export const documentRoute = <C>(api: HttpApi.HttpApi.Any): Route<C> => {
  let res: HttpResponse | undefined
  return {
    method: "GET",
    path: "/v1/openapi.json",
    handler: () => {
      res ??= json(200, openApiDocument(api))
      return { status: res.status, headers: { ...res.headers }, body: res.body }
    }
  }
}

/** The docs page, rendered by @effect/platform's Swagger UI handler (once: about 2 MB with its inlined assets). */
let docsPage: Promise<string> | undefined
const renderDocsPage = async (): Promise<string> => {
  const { handler, dispose } = HttpLayerRouter.toWebHandler(HttpApiSwagger.layerHttpLayerRouter({ api: Api, path: "/v1/docs" }), {
    // Rendered once, in-process: Effect's per-request log line would reach the operator's console.
    disableLogger: true
  })
  try {
    return await (await handler(new Request("http://docs.local/v1/docs"))).text()
  } finally {
    await dispose()
  }
}

/** Routes about the API itself. */
export const metaRoutes: ReadonlyArray<Route<AppCtx>> = [
  documentRoute<AppCtx>(Api),
  {
    method: "GET",
    path: "/v1/ws",
    handler: () => {
      throw new ApiError("upgrade_required", "GET /v1/ws upgrades to a WebSocket: send Connection: Upgrade and Upgrade: websocket")
    }
  },
  {
    method: "GET",
    path: "/v1/docs",
    handler: async () => ({ status: 200, headers: { "content-type": "text/html; charset=utf-8" }, body: await (docsPage ??= renderDocsPage().catch((err: unknown) => {
          docsPage = undefined
          throw err
        })) })
  }
]
