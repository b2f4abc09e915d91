// A title for a file whose front matter gives none: its first level-one heading
// (`# Title`), or else its file name (`my-first-post.md` → `my first post`).
import { basename } from 'node:path'

const FENCE = /^ {0,3}(`{3,}|~{3,})/
const HEADING = /^ {0,3}# +(.*?)(?: +#+)? *$/

/**
 * The text of the body's first ATX level-one heading outside fenced code, trimmed, or
 * undefined. Inline Markdown in it is kept as written (`# A *bold* title`).
 */
export function titleFromBody (body: string): string | undefined {
  let fence: string | undefined
  for (const line of body.split(/\r?\n/)) {
    const opening = FENCE.exec(line)?.[1]
    if (fence !== undefined) {
      // A closing fence is at least as long as the opening one, of the same character.
      if (opening !== undefined && opening[0] === fence[0] && opening.length >= fence.length && line.trim() === opening) fence = undefined
      continue
    }
    if (opening !== undefined) {
      fence = opening
      continue
    }
    const title = HEADING.exec(line.replace(/\t/g, ' '))?.[1]?.trim()
    if (title !== undefined && title !== '') return title
  }
  return undefined
}

/** The file name without `.md` (or its extension), hyphens and underscores read as spaces. */
export function titleFromFileName (path: string): string {
  const file = basename(path)
  const name = /\.md$/i.test(file) ? file.slice(0, -3) : file.replace(/\.[^.]*$/, '')
  return (name === '' ? file : name).replace(/[-_]+/g, ' ').replace(/\s+/g, ' ').trim()
}
