// The client as a front end gets it: the workspace's built module, then the tarball `npm pack`
// makes, installed into a project outside the repository (from the file alone, offline) and
// type-checked there by the package `typescript` (5.9: an older line than the 7 that builds the
// package, as front ends have), under a front end's settings (DOM, no Node types, the
// package's declarations checked too).
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { assertBuilt, CLIENT } from '../helpers/built.js'

const NAME = '@blog-read-api/client'
const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc')

/** The environment less npm's own variables: a child npm run by `npm test` would read them (its prefix among them). */
const CLEAN_ENV = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)))

function run (command: string, args: string[], cwd: string): string {
  return execFileSync(command, args, { cwd, env: CLEAN_ENV, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
}

/** A front end's posts, as its author describes them. */
const PREAMBLE = `import { BlogApiProblem, createBlogClient, createPostCopy, type Page, type SyncChange } from '${NAME}'

interface MyPost { slug: string, title: string, author: string | null, tags: string[], published_at: string }
const blog = createBlogClient<MyPost>({ baseUrl: 'https://blog.example.org/' })
const loose = createBlogClient({ baseUrl: new URL('https://blog.example.org/') })
`

/** Uses that must type-check. */
const RIGHT = `${PREAMBLE}
const posts: MyPost[] = await blog.listPosts({ tag: 'sql' })
const titles: string[] = posts.map((post) => post.title)
const page: Page<Pick<MyPost, 'slug' | 'title' | 'published_at'>> = await blog.listPage({ limit: 10, fields: ['title', 'published_at'] })
const next = await blog.listPage({ limit: 10, fields: ['title'], after: page.after })
const more: string[] = next.posts.map((post) => post.title)
const tags: string[] = (await blog.getPost('hello-world', { fields: ['tags'], requestId: 'page-42' })).tags
const whole: MyPost = await blog.getPost('hello-world', { signal: AbortSignal.timeout(1000) })
const any = await loose.getPost('hello-world', { fields: ['anything'] })
const slug: string = any.slug
const column: unknown = any.anything
const everything: Array<{ slug: string }> = await loose.listPosts({ fields: ['title', 'summary'] as string[] })
try {
  await blog.getPost('gone')
} catch (err) {
  if (!(err instanceof BlogApiProblem) || err.kind !== 'post-not-found') throw err
  const status: number = err.status
  console.log(status, err.problem.detail, err.retryAfter)
}
const copy = createPostCopy<MyPost>()
const change: SyncChange<MyPost> = await blog.sync({ copy })
const held: string[] = [...copy.posts.values()].map((post) => post.title)
const trimmedTitle: string | undefined = (await blog.sync({ since: change.until, fields: ['title'] })).upserted[0]?.title
for await (const event of blog.watch({ since: copy.token, signal: AbortSignal.timeout(1000), onError: console.warn })) {
  if (event.type === 'change') console.log(event.until, event.upserted.join(), event.deleted.join())
  else await blog.sync({ copy })
}
console.log(titles, more, tags, whole, slug, column, everything, held, trimmedTitle)
`

/** Uses that must not type-check, one a line, each with the error TypeScript must report on it. */
const WRONG: Array<[code: string, line: string]> = [
  ['TS2339', 'const subtitle = (await blog.getPost(\'a\')).subtitle'],
  ['TS2322', 'const unknownField = await blog.listPosts({ fields: [\'title\', \'subtitle\'] })'],
  ['TS2339', 'const trimmed = (await blog.getPost(\'a\', { fields: [\'title\'] })).author'],
  ['TS2339', 'const trimmedPage = (await blog.listPage({ limit: 5, fields: [\'title\'] })).posts[0]?.tags'],
  ['TS2322', 'const title: number = (await blog.getPost(\'a\')).title'],
  ['TS2322', 'const author: string = (await blog.getPost(\'a\')).author'],
  ['TS2344', 'const noSlug = createBlogClient<{ title: string }>({ baseUrl: \'https://blog.example.org/\' })'],
  ['TS2322', 'const looseTitle: string = (await loose.getPost(\'a\')).title'],
  ['TS2345', 'const noLimit = await blog.listPage({ fields: [\'title\'] })'],
  ['TS2339', 'const trimmedSync = (await blog.sync({ fields: [\'title\'] })).upserted[0]?.author'],
  ['TS2322', 'const unknownSync = await blog.sync({ fields: [\'subtitle\'] })']
]

describe(`${NAME}, packed and installed into a front end`, () => {
  let project: string
  let packed: { files: Array<{ path: string }>, filename: string }
  before(() => {
    assertBuilt()
    project = mkdtempSync(join(tmpdir(), 'blog-front-end-'))
    // The tarball as published, of the dist/ just checked (prepack would build it again).
    const [pack] = JSON.parse(run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', project], CLIENT)) as Array<typeof packed>
    assert.ok(pack !== undefined)
    packed = pack
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'front-end', private: true, type: 'module' }))
    run('npm', ['install', '--offline', '--no-audit', '--no-fund', join(project, packed.filename)], project)
  })
  after(() => {
    if (project !== undefined) rmSync(project, { recursive: true, force: true })
  })

  test('the workspace resolves it to its built modules, typed, importing nothing but each other (a browser loads them as they are)', async () => {
    const entry = fileURLToPath(import.meta.resolve(NAME))
    assert.equal(entry, join(CLIENT, 'dist', 'index.js'))
    const built = await import(NAME) as typeof import('../../packages/client/src/index.js')
    assert.equal(typeof built.createBlogClient, 'function')
    assert.match(readFileSync(join(CLIENT, 'dist', 'index.d.ts'), 'utf8'), /export declare function createBlogClient<P extends PostShape = Post>/)
    for (const file of readdirSync(join(CLIENT, 'dist')).filter((name) => name.endsWith('.js'))) {
      const code = readFileSync(join(CLIENT, 'dist', file), 'utf8')
      assert.doesNotMatch(code, /\bimport\(/, file)
      for (const [, from] of code.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s+'([^']*)'/gm)) assert.match(from ?? '', /^\.\/[\w-]+\.js$/, `${file} imports ${from}`)
      assert.doesNotMatch(code.replace(/^(?:import|export)\b[^;]*?\bfrom\s+'\.\/[\w-]+\.js'/gm, ''), /^\s*import\b/m, file)
    }
  })

  test('the tarball holds the built files only, and installs as one package: no dependency, no install script, no native build', () => {
    for (const { path } of packed.files) assert.match(path, /^(?:package\.json|README\.md|dist\/[\w.-]+\.(?:js|d\.ts))$/)
    for (const file of ['README.md', 'dist/index.js', 'dist/index.d.ts', 'dist/problem.js', 'dist/schema.d.ts']) assert.ok(packed.files.some(({ path }) => path === file), file)
    const manifest = JSON.parse(readFileSync(join(project, 'node_modules', NAME, 'package.json'), 'utf8')) as Record<string, unknown>
    for (const field of ['dependencies', 'optionalDependencies', 'peerDependencies', 'bundleDependencies', 'bundledDependencies', 'gypfile']) {
      assert.equal(manifest[field], undefined, field)
    }
    const scripts = Object.keys(manifest.scripts ?? {})
    for (const hook of ['preinstall', 'install', 'postinstall', 'prepare']) assert.ok(!scripts.includes(hook), hook)
    const lock = JSON.parse(readFileSync(join(project, 'package-lock.json'), 'utf8')) as { packages: Record<string, unknown> }
    assert.deepEqual(Object.keys(lock.packages).filter((path) => path !== ''), [`node_modules/${NAME}`])
  })

  test('it runs in plain Node from the installed copy', () => {
    const script = `import { createBlogClient } from '${NAME}'
const fetch = async (url) => new Response(JSON.stringify([{ slug: new URL(url).pathname }]), { headers: { link: '</api/blog?after=YQ>; rel="next"' } })
console.log(JSON.stringify(await createBlogClient({ baseUrl: 'https://blog.example.org/', fetch }).listPage({ limit: 1 })))`
    assert.deepEqual(JSON.parse(run(process.execPath, ['--input-type=module', '--eval', script], project)), { posts: [{ slug: '/api/blog' }], after: 'YQ' })
  })

  test('tsc accepts the right uses of createBlogClient<MyPost>() and reports each wrong one, on its line', () => {
    writeFileSync(join(project, 'right.ts'), RIGHT)
    writeFileSync(join(project, 'wrong.ts'), PREAMBLE + WRONG.map(([, line]) => `${line}\n`).join(''))
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'ESNext',
        moduleResolution: 'Bundler',
        lib: ['ES2022', 'DOM'],
        types: [],
        strict: true,
        exactOptionalPropertyTypes: true,
        noEmit: true,
        skipLibCheck: false
      },
      files: ['right.ts', 'wrong.ts']
    }))
    let output = ''
    try {
      output = run(process.execPath, [TSC, '-p', 'tsconfig.json', '--pretty', 'false'], project)
    } catch (err) {
      output = (err as { stdout: string }).stdout
    }
    const reported = [...output.matchAll(/^(\S+?)\((\d+),\d+\): error (TS\d+)/gm)].map(([, file, line, code]) => `${file}:${line} ${code}`)
    const first = PREAMBLE.split('\n').length // PREAMBLE ends with a newline: its last "line" is the first wrong one.
    assert.deepEqual(reported, WRONG.map(([code], i) => `wrong.ts:${first + i} ${code}`), output)
  })
})
