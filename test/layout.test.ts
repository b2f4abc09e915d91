// The layout's rules, in folder terms, checked on the import graph (directly or through any chain
// of modules): what both tiers agree on (contract/) depends on nothing else; generic code (lib/)
// on nothing of ours; the front never reaches the store or the post API (it only speaks HTTP to
// it); the store knows no HTTP; the HTTP kernel knows no tier.
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../src')
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

/** Every .ts file under `folder` (relative to src/). */
function modulesIn (folder: string): string[] {
  return readdirSync(join(SRC, folder), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => join(SRC, folder, name))
}

/** Every src/ module reachable from `roots` (roots excluded unless imported), with the chain that reached it. */
function reachable (roots: string[]): Map<string, string[]> {
  const chains = new Map<string, string[]>()
  const pending: Array<readonly [file: string, chain: string[]]> = roots.map((root) => [root, [root]])
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [file, chain] = next
    for (const imported of importsOf(file)) {
      if (chains.has(imported)) continue
      const reached = [...chain, imported]
      chains.set(imported, reached)
      pending.push([imported, reached])
    }
  }
  return chains
}

/** The chains by which modules of `folder` reach a module outside `allowed` (folders relative to src/, with a trailing slash). */
function crossings (folder: string, allowed: (path: string) => boolean): string[] {
  const roots = modulesIn(folder)
  assert.ok(roots.length > 0, `no modules found under src/${folder}`)
  return [...reachable(roots).entries()]
    .filter(([file]) => !allowed(relative(SRC, file)))
    .map(([, chain]) => chain.map((file) => relative(SRC, file)).join(' → '))
}

const under = (...folders: string[]) => (path: string): boolean => folders.some((folder) => path.startsWith(folder))
const outside = (...folders: string[]) => (path: string): boolean => !under(...folders)(path)

test('the import scan sees imports (a broken scan would pass every rule)', () => {
  const graph = reachable(modulesIn('front'))
  assert.ok(graph.has(join(SRC, 'http', 'representation.ts')))
})

test('contract/ imports only contract/', () => {
  assert.deepEqual(crossings('contract', under('contract/')), [])
})

test('lib/ imports nothing of ours but lib/', () => {
  assert.deepEqual(crossings('lib', under('lib/')), [])
})

test('front/ never reaches posts-api/ or store/, even through shared modules', () => {
  assert.deepEqual(crossings('front', outside('posts-api/', 'store/')), [])
})

test('store/ knows no HTTP: it never reaches http/, front/ or posts-api/', () => {
  assert.deepEqual(crossings('store', outside('http/', 'front/', 'posts-api/')), [])
})

test('http/ knows no tier: it never reaches front/, posts-api/ or store/', () => {
  assert.deepEqual(crossings('http', outside('front/', 'posts-api/', 'store/')), [])
})

test('render/ imports only render/ and lib/: both tiers may render, neither through the other', () => {
  assert.deepEqual(crossings('render', under('render/', 'lib/')), [])
})

test('feeds/ imports only feeds/ and lib/: the front writes feeds from posts it fetched, knowing no store', () => {
  assert.deepEqual(crossings('feeds', under('feeds/', 'lib/')), [])
})
