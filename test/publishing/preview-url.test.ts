// `blog-read-api preview-url`, and the tokens it mints.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { mintPreviewToken, parseTtl, verifyPreviewToken } from '../../src/publishing/preview-token.js'
import { runCliHere } from '../helpers/cli.js'

const SECRET = 'a-preview-secret-of-at-least-32-characters'

test('a token opens its slug until it expires, with its secret only', () => {
  const now = Date.parse('2025-06-01T12:00:00Z')
  const token = mintPreviewToken(SECRET, 'draft', now + 3_600_000)
  assert.equal(verifyPreviewToken(SECRET, token, 'draft', now), true)
  assert.equal(verifyPreviewToken(SECRET, token, 'draft', now + 3_599_999), true)
  assert.equal(verifyPreviewToken(SECRET, token, 'draft', now + 3_600_000), false)
  assert.equal(verifyPreviewToken(SECRET, token, 'other', now), false)
  assert.equal(verifyPreviewToken(`${SECRET}x`, token, 'draft', now), false)
  // A later expiry with the old signature is forged.
  assert.equal(verifyPreviewToken(SECRET, token.replace(/^\d+/, (s) => String(Number(s) + 3600)), 'draft', now), false)
  for (const junk of ['', '.', 'x'.repeat(100), `${token}x`, token.slice(1)]) assert.equal(verifyPreviewToken(SECRET, junk, 'draft', now), false)
})

test('--ttl takes seconds, minutes, hours or days', () => {
  assert.equal(parseTtl('90s'), 90_000)
  assert.equal(parseTtl('30m'), 1_800_000)
  assert.equal(parseTtl('1h'), 3_600_000)
  assert.equal(parseTtl('7d'), 604_800_000)
  assert.equal(parseTtl('45'), 45_000)
  for (const bad of ['', '0', '1w', '-1h', '1.5h', 'h']) assert.equal(parseTtl(bad), undefined, bad)
})

test('preview-url prints a front URL whose token opens the slug for the --ttl given (default 1h)', async () => {
  const before = Date.now()
  const { code, stdout } = await runCliHere(['preview-url', 'my-draft', '--ttl', '2h'], { PREVIEW_SECRET: SECRET, BLOG_PORT: '4000' })
  assert.equal(code, 0)
  const url = new URL(stdout.trim())
  assert.equal(`${url.origin}${url.pathname}`, 'http://127.0.0.1:4000/api/blog/my-draft')
  const token = url.searchParams.get('preview') ?? ''
  assert.equal(verifyPreviewToken(SECRET, token, 'my-draft', before + 2 * 3_600_000 - 2000), true)
  assert.equal(verifyPreviewToken(SECRET, token, 'my-draft', Date.now() + 2 * 3_600_000), false)
  const plain = await runCliHere(['preview-url', 'my-draft'], { PREVIEW_SECRET: SECRET })
  const expires = Number(new URL(plain.stdout.trim()).searchParams.get('preview')?.split('.')[0]) * 1000
  assert.ok(expires > before + 3_600_000 - 2000 && expires <= Date.now() + 3_600_000)
})

test('preview-url refuses, exit 2, without PREVIEW_SECRET, a bad --ttl, a slug the front refuses, or no slug; --ttl belongs to it alone', async () => {
  const cases: Array<[string[], NodeJS.ProcessEnv, RegExp]> = [
    [['preview-url', 'a'], {}, /PREVIEW_SECRET/],
    [['preview-url', 'a', '--ttl', '1w'], { PREVIEW_SECRET: SECRET }, /--ttl 1w/],
    [['preview-url', 'Not-A-Slug'], { PREVIEW_SECRET: SECRET }, /SLUG_PATTERN/],
    [['preview-url'], { PREVIEW_SECRET: SECRET }, /needs one slug/],
    [['migrate', '--ttl', '1h'], {}, /--ttl applies to preview-url only/],
    [['preview-url', 'a'], { PREVIEW_SECRET: 'short' }, /PREVIEW_SECRET.*32/]
  ]
  for (const [args, env, message] of cases) {
    const { code, stderr } = await runCliHere(args, env)
    assert.equal(code, 2, args.join(' '))
    assert.match(stderr, message)
  }
})
