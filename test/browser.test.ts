// In a real browser (Debian's Chromium, driven by playwright-core; never a downloaded one): the
// front's /docs page shows both routes and requests nothing off its own origin, and the example
// page, served from a second origin, lists the posts a page at a time and opens one through CORS,
// and shows a committed change without being reloaded. Every request the pages make is recorded;
// screenshots go to test-results/browser/. Mandatory in CI.
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { startExampleServer, type ExampleServer } from '../examples/blog-page/server.js'
import { assertBuilt } from './helpers/built.js'
import { createSeededSqlite, type TestDatabase } from './helpers/databases.js'
import { startTiersOn, type Tiers } from './helpers/tiers.js'
import { describeOrSkip } from './helpers/describe-or-skip.js'
import { findExecutable } from './helpers/server-processes.js'

const CHROMIUM = '/usr/bin/chromium'
const SCREENSHOTS = fileURLToPath(new URL('../test-results/browser/', import.meta.url))
// The machine refuses outside connections anyway; these keep Chromium from trying.
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run']

const skip = findExecutable([CHROMIUM]) !== undefined || process.env.CI === 'true'
  ? false
  : `${CHROMIUM} is missing (apt-get install chromium)`

// `allHeaders()`: with those the network stack adds, such as Origin.
interface Seen { url: string, headers: Promise<Record<string, string>> }

describeOrSkip('in a real browser', { skip }, () => {
  let db: TestDatabase
  let tiers: Tiers
  let example: ExampleServer
  let browser: Browser
  let context: BrowserContext
  const requests: Seen[] = []
  const problems: string[] = []

  before(async () => {
    // The example page loads the built client.
    assertBuilt()
    db = await createSeededSqlite()
    tiers = await startTiersOn(db)
    example = await startExampleServer()
    mkdirSync(SCREENSHOTS, { recursive: true })
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, timeout: 20_000 })
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    // A bound for failing, not a speed: on a slow machine, beside the other suites, /docs took
    // Chromium from 12 s to over 30 s to show.
    context.setDefaultTimeout(60_000)
    context.on('request', (request) => { requests.push({ url: request.url(), headers: request.allHeaders() }) })
    context.on('console', (message) => { if (message.type() === 'error') problems.push(message.text()) })
    context.on('weberror', (error) => { problems.push(error.error().message) })
  })
  after(async () => {
    await browser?.close()
    await example?.close()
    await tiers?.close()
    await db?.drop()
  })

  /** A fresh page, and the requests and errors seen while `run` used it. */
  async function visit (run: (page: Page) => Promise<void>): Promise<{ urls: URL[], origins: Array<string | undefined> }> {
    requests.length = 0
    problems.length = 0
    const page = await context.newPage()
    try {
      await run(page)
    } catch (err) {
      // What the page had asked for and what went wrong by then: a slow page from a stuck one.
      throw new Error(`${(err as Error).message}\nrequested: ${requests.map((request) => request.url).join(' ')}\nproblems: ${problems.join(' | ')}`, { cause: err })
    } finally {
      await page.close()
    }
    assert.deepEqual(problems, [], 'no script error, no CSP violation, no failed load')
    const origins = await Promise.all(requests.map(async (request) => (await request.headers).origin))
    return { urls: requests.map((request) => new URL(request.url)), origins }
  }

  for (const tier of ['front', 'posts'] as const) {
    test(`${tier}: /docs shows both routes and requests nothing off its own origin`, async () => {
      const base = new URL(tiers[tier].url)
      const paths = tier === 'front' ? ['/api/blog', '/api/blog/{slug}'] : ['/api/posts', '/api/post/{slug}']
      const { urls } = await visit(async (page) => {
        await page.goto(new URL('/docs', base).href)
        for (const path of paths) await page.locator(`.opblock-summary-path[data-path="${path}"]`).waitFor()
        // One operation opened: its responses, problems included, are rendered from the document.
        await page.locator('.opblock-summary-path', { hasText: paths[1] }).click()
        await page.locator('.responses-table .response[data-code="404"]').first().waitFor()
        await page.screenshot({ path: `${SCREENSHOTS}docs-${tier}.png`, fullPage: true })
      })
      assert.ok(urls.length >= 5, `the page and its files: ${urls.join(' ')}`)
      for (const url of urls) assert.equal(url.origin, base.origin, `requested off the page's origin: ${url.href}`)
      assert.ok(urls.some((url) => url.pathname === '/docs/json'), 'the document')
    })
  }

  test('the example page, from another origin, lists the posts and opens one', async () => {
    const front = new URL(tiers.front.url)
    const page = new URL(example.url)
    assert.notEqual(page.origin, front.origin)
    const { urls, origins } = await visit(async (tab) => {
      await tab.goto(`${example.url}?api=${encodeURIComponent(front.origin)}`)
      const items = tab.locator('#posts li')
      await items.nth(2).waitFor()
      assert.deepEqual(await tab.locator('#posts li a').allTextContents(), ['Slugs and stores', 'Why two tiers', 'Hello, world'])
      await tab.screenshot({ path: `${SCREENSHOTS}example-list.png`, fullPage: true })
      await tab.locator('#posts a', { hasText: 'Why two tiers' }).click()
      await tab.locator('#post h2', { hasText: 'Why two tiers' }).waitFor()
      // The content as the API rendered it: headings with ids, no Markdown left.
      await tab.locator('#post .content h2#two-tiers').waitFor()
      assert.doesNotMatch(await tab.locator('#post .content').textContent() ?? '', /## Two tiers/)
      assert.equal(await tab.locator('#posts').isHidden(), true)
      await tab.screenshot({ path: `${SCREENSHOTS}example-post.png`, fullPage: true })
    })
    for (const url of urls) assert.ok(url.origin === page.origin || url.origin === front.origin, `requested elsewhere: ${url.href}`)
    // The page's watch of /api/changes (a stream) is not one of the reads checked here.
    const apiCalls = urls.flatMap((url, i) => url.origin === front.origin && url.pathname !== '/api/changes' ? [{ path: url.pathname, origin: origins[i] }] : [])
    // Cross-origin calls, so CORS is real: the browser sent its Origin and read the answers.
    assert.deepEqual(apiCalls, [{ path: '/api/blog', origin: page.origin }, { path: '/api/blog/two-tiers', origin: page.origin }])
  })

  test('the example page pages the list with the client\'s listPage: per-page posts, then the older ones by the next cursor', async () => {
    const front = new URL(tiers.front.url)
    const { urls } = await visit(async (tab) => {
      await tab.goto(`${example.url}?api=${encodeURIComponent(front.origin)}&per-page=2`)
      await tab.locator('#posts li').nth(1).waitFor()
      assert.deepEqual(await tab.locator('#posts li a').allTextContents(), ['Slugs and stores', 'Why two tiers'])
      await tab.locator('#older').click()
      await tab.locator('#posts li a', { hasText: 'Hello, world' }).waitFor()
      assert.deepEqual(await tab.locator('#posts li a').allTextContents(), ['Hello, world'])
      assert.equal(await tab.locator('#older').isHidden(), true, 'no older page after the last')
      await tab.screenshot({ path: `${SCREENSHOTS}example-older.png`, fullPage: true })
    })
    const lists = urls.filter((url) => url.origin === front.origin && url.pathname !== '/api/changes')
    assert.deepEqual(lists.map((url) => [url.pathname, url.searchParams.get('limit'), url.searchParams.has('after')]), [['/api/blog', '2', false], ['/api/blog', '2', true]])
  })

  test('the example page says a missing post is missing and links back to the list', async () => {
    const front = new URL(tiers.front.url)
    await visit(async (tab) => {
      // The browser logs the 404 itself; that is the page working, not a failure.
      await tab.goto(`${example.url}?api=${encodeURIComponent(front.origin)}#/posts/no-such-post`)
      await tab.locator('#status[data-error]', { hasText: 'Post not found' }).waitFor()
      assert.equal(await tab.locator('#post').isHidden(), true)
      await tab.screenshot({ path: `${SCREENSHOTS}example-missing.png`, fullPage: true })
      await tab.locator('#status a.back').click()
      await tab.locator('#posts li').nth(2).waitFor()
      problems.length = 0
    })
  })

  test('the example page shows a committed change without being reloaded: the list, the post shown, a post removed', async () => {
    const front = new URL(tiers.front.url)
    const { urls } = await visit(async (tab) => {
      await tab.goto(`${example.url}?api=${encodeURIComponent(front.origin)}`)
      await tab.locator('#posts li').nth(2).waitFor()
      await db.exec("UPDATE posts SET title = 'Why two tiers, live' WHERE slug = 'two-tiers'")
      await tab.locator('#posts a', { hasText: 'Why two tiers, live' }).waitFor()
      await tab.locator('#posts a', { hasText: 'Hello, world' }).click()
      await tab.locator('#post h2', { hasText: 'Hello, world' }).waitFor()
      await db.exec("UPDATE posts SET title = 'Hello again' WHERE slug = 'hello-world'")
      await tab.locator('#post h2', { hasText: 'Hello again' }).waitFor()
      await db.exec("DELETE FROM posts WHERE slug = 'hello-world'")
      await tab.locator('#status[data-error]', { hasText: 'Post not found' }).waitFor()
      await tab.screenshot({ path: `${SCREENSHOTS}example-live.png`, fullPage: true })
      // The browser logs the 404 of the post gone; that is the page working.
      problems.length = 0
    })
    assert.ok(urls.some((url) => url.origin === front.origin && url.pathname === '/api/changes'), 'the page followed the change stream')
  })
})
