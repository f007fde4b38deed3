// The OpenAPI documents and the docs page, all generated from the API's declaration
// (src/api/declaration/api.ts) by `@effect/platform`: OpenApi.fromApi for the documents,
// HttpApiSwagger for the page (Swagger UI with its script and styles inlined: the page
// works offline, and the service has no CDN to reach). HttpApiSwagger is imported at the first
// request: its 1.9 MB of inlined Swagger UI was 45% of every bundled process's code, read and
// parsed at each start (scripts/ts-bundle.mjs leaves it in a chunk of its own).
// Subpath imports, here and in src/api/declaration: the package index would pull HttpApiSwagger back in.
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as OpenApi from "@effect/platform/OpenApi"
import type { HttpApi } from "@effect/platform"
import { declaredApi } from "./declaration/api.ts"
import { API_TABLE } from "./declaration/table.ts"
import { json, type HttpResponse } from "./http.ts"

/** The OpenAPI 3.1 document of a declared API (cached by the generator). */
export const openApiDocument = (api: HttpApi.HttpApi.Any = declaredApi()): Record<string, unknown> =>
  OpenApi.fromApi(api as never) as unknown as Record<string, unknown>

/** A handler answering a document as JSON, the API built and serialised at the first request. */
export const documentHandler = (api: () => HttpApi.HttpApi.Any) => {
  let res: HttpResponse | undefined
  return (): HttpResponse => {
    res ??= json(200, openApiDocument(api()))
    return { status: res.status, headers: { ...res.headers }, body: res.body }
  }
}

/** The docs page, rendered by @effect/platform's Swagger UI handler (once: about 2 MB with its inlined assets). */
let docsPageOnce: Promise<string> | undefined
const renderDocsPage = async (): Promise<string> => {
  const { layerHttpLayerRouter } = await import("@effect/platform/HttpApiSwagger")
  const { handler, dispose } = HttpLayerRouter.toWebHandler(layerHttpLayerRouter({ api: declaredApi(), path: API_TABLE.meta.docs.path }), {
    // Rendered once, in-process: Effect's per-request log line would reach the operator's console.
    disableLogger: true
  })
  try {
    return await (await handler(new Request(`http://docs.local${API_TABLE.meta.docs.path}`))).text()
  } finally {
    await dispose()
  }
}

/** The docs page (Swagger UI), rendered on the first request and kept; a failed render is tried again next time. */
export const docsPage = (): Promise<string> =>
  (docsPageOnce ??= renderDocsPage().catch((err: unknown) => {
    docsPageOnce = undefined
    throw err
  }))
