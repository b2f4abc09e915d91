// The files an import reads, as a stream: folders are walked one entry at a time (opendir), so
// a tree of 100,000 posts is never listed whole in memory.
import { opendir, stat } from 'node:fs/promises'
import { join } from 'node:path'

export type WalkEntry =
  | { path: string, error?: undefined }
  /** A path that could not be read (missing, unreadable folder, broken link): reported, skipped. */
  | { path: string, error: string }

const MARKDOWN = /\.md$/i

/**
 * Each file named, whatever its extension, and each `*.md` file under each folder named,
 * recursively, in directory order. Inside folders, names starting with a dot (`.git`, editor
 * files) are skipped, and links are followed to files but not to folders (no cycles).
 */
export async function * walkMarkdownFiles (inputs: readonly string[]): AsyncGenerator<WalkEntry> {
  for (const input of inputs) {
    let stats
    try {
      stats = await stat(input)
    } catch (err) {
      yield { path: input, error: describeFsError(err) }
      continue
    }
    if (stats.isDirectory()) yield * walkFolder(input)
    else if (stats.isFile()) yield { path: input }
    else yield { path: input, error: 'not a file or a folder' }
  }
}

async function * walkFolder (folder: string): AsyncGenerator<WalkEntry> {
  let dir
  try {
    dir = await opendir(folder)
  } catch (err) {
    yield { path: folder, error: describeFsError(err) }
    return
  }
  try {
    for await (const entry of dir) {
      if (entry.name.startsWith('.')) continue
      const path = join(folder, entry.name)
      if (entry.isDirectory()) {
        yield * walkFolder(path)
      } else if (MARKDOWN.test(entry.name)) {
        if (entry.isFile()) yield { path }
        else if (entry.isSymbolicLink()) yield await followLink(path)
      }
    }
  } catch (err) {
    // The folder became unreadable while listed; what was listed stands.
    yield { path: folder, error: describeFsError(err) }
  }
}

async function followLink (path: string): Promise<WalkEntry> {
  try {
    const target = await stat(path)
    return target.isFile() ? { path } : { path, error: 'a link to something other than a file' }
  } catch (err) {
    return { path, error: describeFsError(err) }
  }
}

/** `cannot read: ENOENT (no such file or directory)`, without the path the caller prints anyway. */
export function describeFsError (err: unknown): string {
  const { code, message } = err as NodeJS.ErrnoException
  const detail = /^\w+: ([^,]+)/.exec(message)?.[1]
  return `cannot read: ${code ?? message}${detail === undefined ? '' : ` (${detail})`}`
}
