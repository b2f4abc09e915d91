// `blog-read-api import <file or folder>... [--dry-run] [--body-column NAME]`, in two passes:
// 1. check: walk the tree, read and map every file, keeping only slugs and paths, so that two
//    files with one slug are both refused before anything is written, whatever the import's size;
// 2. write: read the good files again and upsert them in batches, one transaction each.
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import type { Writable } from 'node:stream'
import { describeStore, type StoreLimits, type StoreLocation } from '../config.js'
import { createSlugValidator, DEFAULT_SLUG_PATTERN, SLUG_MAX_LENGTH } from '../contract/slug.js'
import { ColumnValueError } from '../store/column-values.js'
import { openStore } from '../store/open-store.js'
import type { PostStore, PostUpsert } from '../store/store.js'
import { BadFileError } from './bad-file.js'
import { ImportReport } from './import-report.js'
import { readMarkdownFile } from './markdown-file.js'
import { DEFAULT_BODY_COLUMN, postFromMarkdown, type MarkdownFile, type MarkdownMapping } from './post-from-markdown.js'
import { walkMarkdownFiles } from './walk.js'

/** Columns the import fills from the front matter or never sets: never the body's. */
const BODY_REFUSED_COLUMNS = ['id', 'slug', 'title', 'tags', 'published_at', 'updated_at', 'draft', 'status']

/** Posts per transaction; a batch also closes once its files hold this much text. */
const BATCH_POSTS = 500
const BATCH_BYTES = 4 * 1024 * 1024

export interface ImportOptions {
  /** Files and folders, as the user named them (paths are reported as given). */
  inputs: readonly string[]
  /** Check and compare only; write nothing. */
  dryRun: boolean
  /** The column the Markdown body fills (default `content`); it must exist when named. */
  bodyColumn?: string
  store: StoreLocation
  storeLimits: StoreLimits
  slugPattern: RegExp
  stdout: Writable
  stderr: Writable & { isTTY?: boolean, columns?: number }
  /** `updated_at` of the posts this import inserts or changes, when their files name none. */
  now?: Date
}

/**
 * Runs an import and resolves to its exit code: 1 when any file failed, else 0. A store that
 * cannot be used (missing, unreachable, no `posts` table) rejects with a one-line message.
 */
export async function runImport (options: ImportOptions): Promise<number> {
  const store = await openImportStore(options)
  const report = new ImportReport(options, { dryRun: options.dryRun })
  let started = false
  try {
    await store.checkSchema()
    const { bodyColumn = DEFAULT_BODY_COLUMN } = options
    if (BODY_REFUSED_COLUMNS.includes(bodyColumn)) {
      throw new Error(`--body-column cannot be \`${bodyColumn}\`: the import fills it otherwise (name the column that holds the post's Markdown)`)
    }
    if (options.bodyColumn !== undefined && !store.columns.includes(bodyColumn)) {
      throw new Error(`the \`posts\` table has no \`${bodyColumn}\` column (--body-column names the column the Markdown body fills; the table has ${store.columns.map((c) => `\`${c}\``).join(', ')})`)
    }
    started = true
    const mapping: MarkdownMapping = {
      columns: new Set(store.columns),
      bodyColumn,
      isValidSlug: createSlugValidator(options.slugPattern),
      slugRule: options.slugPattern === DEFAULT_SLUG_PATTERN
        ? `a slug is lower-case letters and digits joined by single hyphens, at most ${SLUG_MAX_LENGTH} characters`
        : `a slug must match SLUG_PATTERN, at most ${SLUG_MAX_LENGTH} characters`,
      now: options.now ?? new Date()
    }
    const files = await checkFiles(options.inputs, mapping, report)
    await writePosts(files, mapping, store, report, options.dryRun)
    report.summary()
    return report.counts.failed > 0 ? 1 : 0
  } catch (err) {
    // What was committed before the store failed stays committed: say how much.
    if (started) report.summary()
    throw new Error(`cannot import into ${describeStore(options.store)}: ${describeFailure(err)}`, { cause: err })
  } finally {
    await store.close().catch(() => {})
  }
}

/** Writable as `migrate` and `seed` open it; a dry run reads only. A SQLite file is never created here. */
async function openImportStore ({ store: location, storeLimits, dryRun }: ImportOptions): Promise<PostStore> {
  if (location.dialect === 'sqlite' && !existsSync(location.filename)) {
    throw new Error(`cannot import into ${describeStore(location)}: the file does not exist (create it with \`blog-read-api migrate\`)`)
  }
  try {
    // An idle pooled connection lost mid-import is replaced by the pool; a query that fails on
    // one reports itself.
    return await openStore(location, { writable: !dryRun, limits: storeLimits, onPoolError: () => {} })
  } catch (err) {
    throw new Error(`cannot import into ${describeStore(location)}: ${describeFailure(err)}`, { cause: err })
  }
}

/** Pass 1: every file read and mapped; the slugs of the files to write, each with its one file. */
async function checkFiles (inputs: readonly string[], mapping: MarkdownMapping, report: ImportReport): Promise<Map<string, string>> {
  const bySlug = new Map<string, string>()
  const duplicates = new Map<string, string[]>()
  // A file named twice (`posts posts/2024`) is one file, not two with one slug.
  const seen = new Set<string>()
  let checked = 0
  for await (const entry of walkMarkdownFiles(inputs)) {
    report.progress('checking', ++checked)
    if (entry.error !== undefined) {
      report.fail(entry.path, entry.error)
      continue
    }
    const resolved = resolve(entry.path)
    if (seen.has(resolved)) continue
    seen.add(resolved)
    const file = readPost(entry.path, mapping, report)
    if (file === undefined) continue
    if (file.kind === 'draft') {
      report.draft(entry.path)
      continue
    }
    for (const { key, reason } of file.ignored) report.ignore(key, reason, entry.path)
    const first = bySlug.get(file.slug)
    if (first === undefined) bySlug.set(file.slug, entry.path)
    else duplicates.set(file.slug, [...(duplicates.get(file.slug) ?? [first]), entry.path])
  }
  for (const [slug, paths] of duplicates) {
    bySlug.delete(slug)
    for (const path of paths) report.fail(path, `slug "${slug}" is also the slug of ${paths.filter((p) => p !== path).join(', ')}`)
  }
  return bySlug
}

function readPost (path: string, mapping: MarkdownMapping, report: ImportReport, failurePrefix = ''): MarkdownFile | undefined {
  try {
    return postFromMarkdown(path, readMarkdownFile(path), mapping)
  } catch (err) {
    if (!(err instanceof BadFileError)) throw err
    report.fail(path, failurePrefix + err.message)
    return undefined
  }
}

interface BatchItem {
  slug: string
  path: string
  post: PostUpsert
  /** A draft stored with its `draft`/`status` column saying so: named once written. */
  draft: boolean
}

/** Pass 2: the checked files read again (only their slugs and paths were kept), in batches. */
async function writePosts (files: Map<string, string>, mapping: MarkdownMapping, store: PostStore, report: ImportReport, dryRun: boolean): Promise<void> {
  let batch: BatchItem[] = []
  let bytes = 0
  let done = 0
  const flush = async (): Promise<void> => {
    await upsertBatch(store, batch, report, dryRun)
    done += batch.length
    report.progress('writing', done, files.size)
    batch = []
    bytes = 0
  }
  for (const [slug, path] of files) {
    const file = readPost(path, mapping, report, 'changed during the import: ')
    if (file === undefined) {
      done++
      continue
    }
    if (file.kind !== 'post' || file.slug !== slug) {
      done++
      report.fail(path, 'changed during the import (now a draft, or another slug); run the import again')
      continue
    }
    batch.push({ slug, path, post: file.post, draft: file.draft })
    const body = file.post.values[mapping.bodyColumn]
    bytes += typeof body === 'string' ? body.length : 0
    if (batch.length >= BATCH_POSTS || bytes >= BATCH_BYTES) await flush()
  }
  if (batch.length > 0) await flush()
}

/**
 * One transaction for the batch. A post the database refuses (a value too long for its column,
 * a constraint) fails the whole transaction: then, if the store still answers, the batch is
 * written again one post at a time, so that only that post's file fails.
 */
async function upsertBatch (store: PostStore, batch: BatchItem[], report: ImportReport, dryRun: boolean): Promise<void> {
  let outcomes
  try {
    outcomes = await store.upsertPosts(batch.map((item) => item.post), { dryRun })
  } catch (err) {
    if (batch.length > 1) {
      await store.checkSchema() // throws when the store itself failed: the import stops
      for (const item of batch) await upsertBatch(store, [item], report, dryRun)
      return
    }
    // Refused before any statement: in a dry run as in the real one.
    if (err instanceof ColumnValueError) {
      report.fail(batch[0]?.path ?? '', err.message)
      return
    }
    await store.checkSchema()
    report.fail(batch[0]?.path ?? '', `the database refused it: ${describeFailure(err)}`)
    return
  }
  for (const [i, item] of batch.entries()) {
    const outcome = outcomes[i] ?? 'unchanged'
    report.written(item.slug, item.path, outcome)
    if (item.draft) report.draft(item.path, { outcome, marks: draftMarks(item.post) })
  }
}

/** How a stored draft is marked: `draft` true, `status` "draft". */
function draftMarks ({ values }: PostUpsert): string {
  return [...('draft' in values ? ['`draft` true'] : []), ...('status' in values ? [`\`status\` ${JSON.stringify(values.status)}`] : [])].join(', ')
}

/** One line: the message and, for wrapped errors, what caused it. */
function describeFailure (err: unknown): string {
  if (!(err instanceof Error)) return String(err)
  const cause = err.cause instanceof Error ? `: ${err.cause.message || ((err.cause as NodeJS.ErrnoException).code ?? '')}` : ''
  return (err.message || ((err as NodeJS.ErrnoException).code ?? err.name)) + cause
}
