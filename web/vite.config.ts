// Vite builds web/ into web/dist (served by web/server.ts under `npm start`). `npm run web:dev`
// serves it with hot reload on 127.0.0.1:5173 and proxies the API (8080) and the deposit
// service (8081) of a running `npm start`, so the page uses its own origin for both.
import { fileURLToPath } from "node:url"
import { defineConfig } from "vite"

const root = fileURLToPath(new URL(".", import.meta.url))
const api = process.env["WEB_DEV_API"] ?? "http://127.0.0.1:8080"
const deposit = process.env["WEB_DEV_DEPOSIT"] ?? "http://127.0.0.1:8081"

export default defineConfig({
  root,
  base: "/",
  publicDir: false,
  logLevel: "warn",
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    sourcemap: false,
    chunkSizeWarningLimit: 800
  },
  server: {
    host: "127.0.0.1",
    port: 5173,
    fs: { allow: [fileURLToPath(new URL("..", import.meta.url))] },
    proxy: {
      // The service checks Origin on cookie POSTs: present the origin its default allow-list has.
      "/v1/deposit": { target: deposit, headers: { origin: "http://127.0.0.1:3000" } },
      "/v1/ws": { target: api.replace(/^http/, "ws"), ws: true, headers: { origin: "http://127.0.0.1:3000" } },
      "/v1": { target: api, headers: { origin: "http://127.0.0.1:3000" } }
    }
  }
})
