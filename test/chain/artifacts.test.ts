// The committed artifacts are what the sources compile to: recompiling with the bundled solc-js
// (offline) must reproduce contracts/artifacts/* byte for byte.
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { ARTIFACT_CONTRACTS, ARTIFACTS_DIR, compileContracts, renderArtifacts } from "../../contracts/compile.ts"

describe("contract artifacts", () => {
  it("are fresh: a recompile reproduces every committed file exactly (run `npm run build:contracts` if not)", () => {
    const compilation = compileContracts()
    expect(compilation.compilerVersion).toMatch(/^0\.8\.37\+/)
    expect(compilation.warnings).toEqual([])
    const files = renderArtifacts(compilation)
    expect([...files.keys()].sort()).toEqual(readdirSync(ARTIFACTS_DIR).sort())
    for (const [name, content] of files) {
      expect(readFileSync(join(ARTIFACTS_DIR, name), "utf8"), `contracts/artifacts/${name} is stale`).toBe(content)
    }
  })

  it("hold an abi and creation bytecode for each contract", () => {
    for (const name of ARTIFACT_CONTRACTS) {
      const artifact = JSON.parse(readFileSync(join(ARTIFACTS_DIR, `${name}.json`), "utf8")) as { contractName: string; abi: unknown[]; bytecode: string }
      expect(artifact.contractName).toBe(name)
      expect(artifact.abi.length).toBeGreaterThan(0)
      expect(artifact.bytecode).toMatch(/^0x[0-9a-f]{200,}$/)
    }
  })
})
