// What each command of `blog-read-api` is, for the help: its one-line summary, its own arguments,
// what it does, and its exit codes. The settings it reads come from the settings table.
import type { CommandName } from '../settings.js'

export interface CommandInfo {
  /** One line, in the list of commands. */
  readonly summary: string
  /** What follows the command's name in its usage line, before the settings' flags. */
  readonly arguments?: string
  /** Its own arguments and flags, each with what it means. */
  readonly argumentHelp?: ReadonlyArray<readonly [string, string]>
  /** What it does, a few lines. */
  readonly description: readonly string[]
  readonly exitCodes: ReadonlyArray<readonly [number, string]>
}

/** Every command's mistakes: a bad flag, argument or setting value. */
const MISTAKE = [2, 'a mistake on the command line or in a setting (one line saying which)'] as const

const SERVING_EXIT_CODES = [
  [0, 'stopped by SIGINT or SIGTERM after closing gracefully'],
  [1, 'could not start (the store, a port in use), or closing took longer than SHUTDOWN_TIMEOUT_MS'],
  MISTAKE
] as const

export const COMMANDS: Record<CommandName, CommandInfo> = {
  serve: {
    summary: 'both tiers in one process (the default): the post API, then the front API calling it',
    description: [
      'Serves the post API on POSTS_PORT, then the front API on BLOG_PORT, calling that post API',
      '(or API_URL, when set). Without DATABASE_URL it serves ./data/blog.db, created and filled',
      'with sample posts when absent. SIGINT or SIGTERM closes the front, then the post API.'
    ],
    exitCodes: SERVING_EXIT_CODES
  },
  front: {
    summary: 'the front API alone, calling the post APIs at API_URL',
    description: [
      'Serves the public front API on BLOG_PORT; it never reads the database, it calls the post',
      'APIs at API_URL (required).'
    ],
    exitCodes: SERVING_EXIT_CODES
  },
  'posts-api': {
    summary: 'the upstream post API alone, reading DATABASE_URL',
    description: [
      'Serves the post API on POSTS_PORT from DATABASE_URL, which it only reads. A SQLite file',
      'you name must exist: `blog-read-api migrate` creates it.'
    ],
    exitCodes: SERVING_EXIT_CODES
  },
  migrate: {
    summary: 'create the `posts` table in DATABASE_URL when it is absent (and the SQLite file)',
    arguments: '[--search]',
    argumentHelp: [
      ['--search', 'also create the search index of SEARCH_COLUMNS in the store (FTS5, a tsvector column, FULLTEXT)']
    ],
    description: [
      'Creates the `posts` table and its index in DATABASE_URL when absent (a SQLite file and its',
      'folder too). On SQLite, also the change counter that gives every post API process on the file',
      'the same posts version; on a `posts` view, that counter\'s triggers on the tables the view reads.',
      'With --search, also the store\'s own search index for q (without it, the post API keeps a',
      'search index in memory). Running it again changes nothing.'
    ],
    exitCodes: [[0, 'the posts table is ready'], [1, 'the store cannot be reached or written'], MISTAKE]
  },
  seed: {
    summary: 'insert the sample posts that are not there yet',
    description: ['Inserts the sample posts whose slugs are not in DATABASE_URL yet (run `migrate` first).'],
    exitCodes: [[0, 'the sample posts are there'], [1, 'the store cannot be reached or written, or has no posts table'], MISTAKE]
  },
  import: {
    summary: 'import Markdown files with YAML front matter into `posts`',
    arguments: '<file or folder>... [--dry-run] [--body-column NAME]',
    argumentHelp: [
      ['<file or folder>...', 'Markdown files (any name), and folders searched for *.md files'],
      ['--dry-run', 'check every file, and each value against its column; compare with the store; write nothing'],
      ['--body-column NAME', 'the column the Markdown body fills (default: content)']
    ],
    description: [
      'Inserts new slugs and updates changed posts, in transactions of up to 500 posts, into the',
      '`posts` table of DATABASE_URL (run `migrate` first); reports each file it refused.',
      'Each value is written as its column needs it (tags as a PostgreSQL array, JSON or text);',
      'a value its column cannot hold fails its file, in a dry run as in the real one. Without',
      '`title:`, the title is the first `# heading`, else the file name. `draft: true` marks a',
      '`draft` or `status` column when the table has one, and is kept out otherwise; each draft',
      'is named in the report. See docs/import.md.'
    ],
    exitCodes: [[0, 'every file imported (or, with --dry-run, would be)'], [1, 'a file was refused, or the store cannot be used'], MISTAKE]
  },
  'preview-url': {
    summary: 'print a front URL that shows one post, published or not, until it expires',
    arguments: 'SLUG [--ttl 1h]',
    argumentHelp: [
      ['SLUG', 'the post to show'],
      ['--ttl DURATION', 'how long the link works: 90s, 30m, 1h (the default), 7d']
    ],
    description: [
      'Prints http://HOST:BLOG_PORT/api/blog/SLUG?preview=TOKEN, a token signed with',
      'PREVIEW_SECRET (which the post API must share). The front relays it, and the post API',
      'serves the post whatever PUBLISHED_ONLY says, with Cache-Control: private, no-store.'
    ],
    exitCodes: [[0, 'the URL is printed'], [1, 'an unexpected failure: no URL is printed'], MISTAKE]
  }
}
