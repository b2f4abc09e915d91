// The front never reads the store and never loads the post API: nothing under src/front imports
// src/posts-api or src/store, directly or through a shared module (issue 7). What both tiers
// need lives in shared modules at src/'s top level.
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src')
const FORBIDDEN = ['posts-api/', 'store/']
// `import … from '…'`, `export … from '…'`, `import '…'` and `import('…')`.
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*)['"]([^'"]+)['"]/g

/** The relative imports of a source file, as paths of .ts files under src/. */
function importsOf (file: string): string[] {
  const source = readFileSync(file, 'utf8')
  return [...source.matchAll(SPECIFIER)]
    .map((match) => match[1] ?? '')
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => resolve(dirname(file), specifier).replace(/\.js$/, '.ts'))
}

/** Every src/ module reachable from `roots`, with the chain that reached it. */
function moduleGraph (roots: string[]): Map<string, string[]> {
  const chains = new Map<string, string[]>(roots.map((root) => [root, [root]]))
  const pending = [...roots]
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    for (const imported of importsOf(file)) {
      if (chains.has(imported)) continue
      chains.set(imported, [...(chains.get(file) ?? []), imported])
      pending.push(imported)
    }
  }
  return chains
}

test('src/front reaches neither src/posts-api nor src/store, even through shared modules', () => {
  const front = readdirSync(join(SRC, 'front'), { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.ts')).map((name) => join(SRC, 'front', name))
  assert.ok(front.length >= 4, 'no front modules found')
  const graph = moduleGraph(front)
  assert.ok(graph.has(join(SRC, 'http', 'representation.ts')), 'the import scan found no shared module: it is broken')
  const crossings = [...graph.entries()]
    .filter(([file]) => FORBIDDEN.some((folder) => relative(SRC, file).startsWith(folder)))
    .map(([, chain]) => chain.map((file) => relative(SRC, file)).join(' → '))
  assert.deepEqual(crossings, [])
})
