import assert from 'node:assert/strict'
import { test } from 'node:test'
import { BadFileError } from '../../src/import/bad-file.js'
import { postFromMarkdown, type MarkdownMapping } from '../../src/import/post-from-markdown.js'
import { createSlugValidator } from '../../src/contract/slug.js'

const DEFAULT_COLUMNS = ['id', 'slug', 'title', 'summary', 'content', 'author', 'tags', 'published_at', 'updated_at']
const now = new Date('2026-06-01T12:00:00.000Z')
const mapping = (columns = DEFAULT_COLUMNS, pattern?: RegExp, bodyColumn = 'content'): MarkdownMapping =>
  ({ columns: new Set(columns), bodyColumn, isValidSlug: createSlugValidator(pattern), slugRule: 'the rule', now })

const post = (path: string, text: string, columns?: string[], bodyColumn?: string) => {
  const file = postFromMarkdown(path, text, mapping(columns, undefined, bodyColumn))
  assert.equal(file.kind, 'post')
  return file as Extract<typeof file, { kind: 'post' }>
}
const fails = (text: string, reason: RegExp, path = 'post.md', columns?: string[]): void => {
  assert.throws(() => postFromMarkdown(path, text, mapping(columns)), (err: unknown) => err instanceof BadFileError && reason.test(err.message))
}

test('the mapping: title, slug, date, updated, author, tags, summary, body', () => {
  const file = post('x/ignored-name.md', `---
title: Hello
slug: hello-world
date: 2024-01-02
updated: 2024-01-03T04:05:06+01:00
author: Ada
tags: [a, b]
summary: Short.
---
# Body
`)
  assert.equal(file.slug, 'hello-world')
  assert.deepEqual(file.post, {
    values: {
      slug: 'hello-world',
      title: 'Hello',
      author: 'Ada',
      summary: 'Short.',
      tags: ['a', 'b'],
      published_at: new Date('2024-01-02T00:00:00Z'),
      updated_at: new Date('2024-01-03T03:05:06Z'),
      content: '# Body\n'
    }
  })
  assert.deepEqual(file.ignored, [])
})

test('absent keys: empty tags, null fields; updated_at stamped only when written', () => {
  const file = post('Third Post!.md', '---\ntitle: T\n---\n')
  assert.equal(file.slug, 'third-post')
  assert.deepEqual(file.post, {
    values: { slug: 'third-post', title: 'T', author: null, summary: null, tags: [], published_at: null, content: '' },
    stampOnWrite: { updated_at: now }
  })
})

test('scalars become text; other keys go to columns of their name, or are reported', () => {
  const file = post('p.md', '---\ntitle: 1984\ntags: [2024, true]\ncategory: news\nfeatured: true\nextra: {a: [1]}\nlayout: post\n' +
    'published_at: 2020-01-01\ncontent: x\nid: 7\n---\n', [...DEFAULT_COLUMNS, 'category', 'featured', 'extra'])
  assert.equal(file.post.values.title, '1984')
  assert.deepEqual(file.post.values.tags, ['2024', 'true'])
  assert.equal(file.post.values.category, 'news')
  assert.equal(file.post.values.featured, true)
  assert.deepEqual(file.post.values.extra, { a: [1] })
  assert.equal(file.post.values.id, undefined)
  assert.equal(file.post.values.published_at, null)
  assert.equal(file.post.values.content, '')
  assert.deepEqual(file.ignored.map((i) => i.key), ['layout', 'published_at', 'content', 'id'])
  assert.match(file.ignored[0]?.reason ?? '', /no `layout` column/)
  assert.match(file.ignored[1]?.reason ?? '', /`date`/)
})

test('a table without some mapped columns: what the file has for them is reported, nothing else', () => {
  const file = post('p.md', '---\ntitle: T\ntags: [a]\ndate: 2024-01-02\n---\nbody', ['slug', 'title'])
  assert.deepEqual(file.post, { values: { slug: 'p', title: 'T' } })
  assert.deepEqual(file.ignored.map((i) => i.key), ['tags', 'date', 'the body'])
  assert.deepEqual(post('p.md', '---\ntitle: T\n---\n', ['slug', 'title']).ignored, [])
  assert.deepEqual(post('p.md', 'no front matter', ['slug']).post, { values: { slug: 'p' } })
})

test('drafts are skipped before anything else is checked; draft must be a boolean', () => {
  assert.deepEqual(postFromMarkdown('!!!.md', '---\ndraft: true\ndate: nonsense\n---\n', mapping()), { kind: 'draft' })
  assert.equal(post('p.md', '---\ntitle: T\ndraft: false\n---\n').slug, 'p')
  assert.equal(post('p.md', '---\ntitle: T\ndraft:\n---\n').slug, 'p')
  fails('---\ntitle: T\ndraft: yes\n---\n', /"draft" must be true or false, not "yes"/)
})

test('bad files fail with the reason', () => {
  fails('---\ntitle: T\nslug: Not A Slug\n---\n', /invalid slug "Not A Slug" \(the rule\)/)
  fails('---\ntitle: T\nslug: [a]\n---\n', /"slug" must be text, not a list/)
  fails('---\ntitle: T\n---\n', /file name gives no valid slug \(""; the rule\)/, 'posts/!!!.md')
  fails('---\ntitle: T\n---\n', /file name gives no valid slug/, `${'a'.repeat(201)}.md`)
  fails('---\ntitle: T\ndate: 2024-02-30\n---\n', /"date" is not a date: "2024-02-30"/)
  fails('---\ntitle: T\nupdated: soon\n---\n', /"updated" is not a date: "soon"/)
  fails('---\ntitle: T\ntags: a, b\n---\n', /"tags" must be a list/)
  fails('---\ntitle: T\ntags: [[a]]\n---\n', /"tags" must be a list of words, not one holding a list/)
  fails('---\ntitle: {a: 1}\n---\n', /"title" must be text, not a mapping/)
  fails('---\ntitle: "  "\n---\n', /an empty title \(give `title:` a value/)
  fails('---\ntitle: ""\n---\n', /an empty title/)
})

test('without `title:`, the title is the first `# heading` outside fenced code, else the file name', () => {
  assert.equal(post('p.md', 'Intro.\n\n## Second level\n\n# The title #\n\n# Another\n').post.values.title, 'The title')
  assert.equal(post('p.md', '```md\n# not this\n```\n~~~~\n# nor this\n~~~\n~~~~\n   # This *one*\n').post.values.title, 'This *one*')
  assert.equal(post('p.md', '---\nauthor: A\n---\n#Not a heading\n#\n').post.values.title, 'p')
  assert.equal(post('notes/my-first_post.md', 'just text').post.values.title, 'my first post')
  assert.equal(post('Third Post!.md', '').post.values.title, 'Third Post!')
  assert.equal(post('p.md', '---\ntitle: Given\n---\n# Heading\n').post.values.title, 'Given')
  // A heading found is never removed from the body.
  assert.equal(post('p.md', '# T\nbody\n').post.values.content, '# T\nbody\n')
})

test('--body-column: the body fills the named column; `content` is then an ordinary key', () => {
  const columns = ['slug', 'title', 'body_html', 'content']
  const file = post('p.md', '---\ntitle: T\ncontent: from the key\nbody_html: not the body\n---\nThe body.\n', columns, 'body_html')
  assert.deepEqual(file.post.values, { slug: 'p', title: 'T', body_html: 'The body.\n', content: 'from the key' })
  assert.deepEqual(file.ignored, [{ key: 'body_html', reason: 'the Markdown body fills it' }])
  const none = post('p.md', '---\ntitle: T\n---\nThe body.\n', ['slug', 'title', 'body_html'])
  assert.deepEqual(none.ignored, [{ key: 'the body', reason: "the posts table has no `content` column; name the body's column with --body-column" }])
})

test('drafts: marked in a `draft` or `status` column when the table has one, every other post marked published', () => {
  const draft = post('p.md', '---\ntitle: T\ndraft: true\nstatus: published\n---\n', ['slug', 'title', 'draft', 'status'])
  assert.equal(draft.draft, true)
  assert.deepEqual(draft.post.values, { slug: 'p', title: 'T', draft: true, status: 'draft' })
  const published = post('p.md', '---\ntitle: T\n---\n', ['slug', 'title', 'draft', 'status'])
  assert.equal(published.draft, false)
  assert.deepEqual(published.post.values, { slug: 'p', title: 'T', draft: false, status: 'published' })
  // A file's own `status` stands, unless it is a draft.
  assert.equal(post('p.md', '---\ntitle: T\nstatus: scheduled\n---\n', ['slug', 'title', 'status']).post.values.status, 'scheduled')
  assert.equal(post('p.md', '---\ntitle: T\ndraft: true\n---\n', ['slug', 'title', 'status']).post.values.status, 'draft')
  assert.deepEqual(postFromMarkdown('p.md', '---\ndraft: true\n---\n', mapping(['slug', 'title'])), { kind: 'draft' })
})

test('an operator slug pattern decides for front-matter and derived slugs alike', () => {
  const upper = mapping(DEFAULT_COLUMNS, /[A-Za-z-]+/)
  const file = postFromMarkdown('x.md', '---\ntitle: T\nslug: Mixed-Case\n---\n', upper)
  assert.equal(file.kind === 'post' && file.slug, 'Mixed-Case')
  const digitsOnly = mapping(DEFAULT_COLUMNS, /[0-9]+/)
  assert.throws(() => postFromMarkdown('Hello.md', '---\ntitle: T\n---\n', digitsOnly), /file name gives no valid slug \("hello"/)
})
