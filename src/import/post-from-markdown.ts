// One Markdown file → one post: the front matter's keys mapped to the columns of
// `posts`, the body to its column (`content` unless named), the slug checked or derived from the
// file name, the title from the front matter, the first `# heading` or the file name.
import type { JsonValue, PostUpsert, PostValue } from '../store/store.js'
import { BadFileError } from './bad-file.js'
import { parseFrontMatterDate } from './front-matter-date.js'
import { parseFrontMatter } from './front-matter.js'
import { slugFromFileName } from './file-name-slug.js'
import { titleFromBody, titleFromFileName } from './fallback-title.js'

/** Front-matter keys with a meaning of their own, and the column each fills. */
const MAPPED_KEYS = {
  title: 'title',
  slug: 'slug',
  date: 'published_at',
  updated: 'updated_at',
  author: 'author',
  tags: 'tags',
  summary: 'summary'
} as const
type MappedKey = keyof typeof MAPPED_KEYS

/** Columns only a mapped key may fill, and the table's key, which is not ours to set. */
const RESERVED_COLUMNS: Record<string, string> = {
  published_at: 'set it with `date`',
  updated_at: 'set it with `updated`',
  id: "the table's key is not set by the import"
}

/** The body's column when the command names none. */
export const DEFAULT_BODY_COLUMN = 'content'

/** A draft's `status`, and every other post's when the file names none (the publishing rules' word). */
export const DRAFT_STATUS = 'draft'
export const PUBLISHED_STATUS = 'published'

export type MarkdownFile =
  /** A draft the table has no column to mark as one: kept out. */
  | { kind: 'draft' }
  /** `draft`: a draft stored with its `draft`/`status` column saying so. */
  | { kind: 'post', slug: string, post: PostUpsert, ignored: IgnoredKey[], draft: boolean }

/** A front-matter key (or the body) with no column to go to: reported once per import. */
export interface IgnoredKey {
  key: string
  reason: string
}

export interface MarkdownMapping {
  /** Columns of `posts`. */
  columns: ReadonlySet<string>
  /** The column the Markdown body fills (`--body-column`, else `content`). */
  bodyColumn: string
  /** The slug rule (SLUG_PATTERN), which front-matter and derived slugs alike must pass. */
  isValidSlug: (slug: string) => boolean
  /** The rule in words, for the reports. */
  slugRule: string
  /** The time a post's `updated_at` takes when its file names none and the import changes it. */
  now: Date
}

/** Reads a file's text as a post, a draft, or throws BadFileError with the reason. */
export function postFromMarkdown (path: string, text: string, mapping: MarkdownMapping): MarkdownFile {
  const { data, body } = parseFrontMatter(text)
  if (data.draft !== undefined && data.draft !== null && typeof data.draft !== 'boolean') {
    // `draft: yes` is a string in YAML 1.2: publishing a post meant as a draft would be worse than failing.
    throw new BadFileError(`"draft" must be true or false, not ${describe(data.draft)}`)
  }
  const draft = data.draft === true
  const { columns, bodyColumn } = mapping
  if (draft && !columns.has('draft') && !columns.has('status')) return { kind: 'draft' }
  const values: Record<string, PostValue> = {}
  const ignored: IgnoredKey[] = []
  // A column the table lacks is reported only when the file has something for it.
  const put = (key: string, column: string, value: PostValue, given = data[key] !== undefined): void => {
    if (columns.has(column)) values[column] = value
    else if (given) ignored.push({ key, reason: `the posts table has no \`${column}\` column` })
  }

  const slug = readSlug(path, data.slug, mapping)
  const title = readText(data, 'title') ?? titleFromBody(body) ?? titleFromFileName(path)
  if (columns.has('title') && title.trim() === '') throw new BadFileError('an empty title (give `title:` a value, or remove it to take the first `# heading` or the file name)')
  put('title', 'title', title)
  put('author', 'author', readText(data, 'author'))
  put('summary', 'summary', readText(data, 'summary'))
  put('tags', 'tags', readTags(data.tags))
  put('date', 'published_at', readDate(data, 'date'))
  if (columns.has(bodyColumn)) values[bodyColumn] = body
  else if (body.trim() !== '') ignored.push({ key: 'the body', reason: `the posts table has no \`${bodyColumn}\` column; name the body's column with --body-column` })
  // The publishing rules' columns: a draft is marked, every other post marked published.
  if (columns.has('draft')) values.draft = draft
  if (columns.has('status') && (draft || data.status === undefined || data.status === null)) values.status = draft ? DRAFT_STATUS : PUBLISHED_STATUS
  const updated = readDate(data, 'updated')
  if (updated !== null) put('updated', 'updated_at', updated)

  for (const [key, value] of Object.entries(data)) {
    if (key === 'draft' || Object.hasOwn(MAPPED_KEYS, key)) continue
    if (key === 'status' && values.status !== undefined) continue
    const reserved = key === bodyColumn ? 'the Markdown body fills it' : RESERVED_COLUMNS[key]
    if (reserved !== undefined) ignored.push({ key, reason: reserved })
    else put(key, key, value as JsonValue)
  }
  const stampOnWrite = updated === null && columns.has('updated_at') ? { updated_at: mapping.now } : undefined
  return { kind: 'post', slug, post: { values: { ...values, slug }, ...(stampOnWrite && { stampOnWrite }) }, ignored, draft }
}

function readSlug (path: string, value: unknown, { isValidSlug, slugRule }: MarkdownMapping): string {
  if (value === undefined || value === null) {
    const derived = slugFromFileName(path)
    if (!isValidSlug(derived)) throw new BadFileError(`the file name gives no valid slug (${JSON.stringify(derived)}; ${slugRule}): add \`slug:\` to the front matter`)
    return derived
  }
  if (typeof value !== 'string' && typeof value !== 'number') throw new BadFileError(`"slug" must be text, not ${describe(value)}`)
  const slug = String(value)
  if (!isValidSlug(slug)) throw new BadFileError(`invalid slug ${JSON.stringify(slug)} (${slugRule})`)
  return slug
}

/** A text field: scalars as text (`title: 1984` is a title), null when absent. */
function readText (data: Record<string, unknown>, key: MappedKey): string | null {
  const value = data[key]
  if (value === undefined || value === null) return null
  if (typeof value === 'string') return value
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  throw new BadFileError(`"${key}" must be text, not ${describe(value)}`)
}

function readTags (value: unknown): string[] {
  if (value === undefined || value === null) return []
  if (!Array.isArray(value)) throw new BadFileError(`"tags" must be a list (tags: [a, b]), not ${describe(value)}`)
  return value.map((tag) => {
    if (typeof tag === 'string') return tag
    if (typeof tag === 'number' || typeof tag === 'boolean') return String(tag)
    throw new BadFileError(`"tags" must be a list of words, not one holding ${describe(tag)}`)
  })
}

function readDate (data: Record<string, unknown>, key: 'date' | 'updated'): Date | null {
  const value = data[key]
  if (value === undefined || value === null) return null
  const date = parseFrontMatterDate(value)
  if (date === undefined) {
    throw new BadFileError(`"${key}" is not a date: ${describe(value)} (expected YYYY-MM-DD, or an ISO 8601 date and time such as 2024-01-02T10:00:00Z)`)
  }
  return date
}

function describe (value: unknown): string {
  if (Array.isArray(value)) return 'a list'
  if (value !== null && typeof value === 'object') return 'a mapping'
  const text = JSON.stringify(value) ?? String(value)
  return text.length > 60 ? `${text.slice(0, 57)}...` : text
}
