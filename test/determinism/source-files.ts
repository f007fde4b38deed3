// Every .ts/.mts/.js/.mjs file under a directory (the guards' inputs).
import { readdirSync, statSync } from "node:fs"
import { join } from "node:path"

export const sourceFiles = (dir: string): string[] => {
  let out: string[] = []
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch {
    return out
  }
  for (const name of names) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) out = out.concat(sourceFiles(path))
    else if (/\.(ts|mts|js|mjs)$/.test(name)) out.push(path)
  }
  return out
}
