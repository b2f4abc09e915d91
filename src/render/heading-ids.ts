// Heading ids, so that a page can link to a section (`#installation`), made as GitHub makes them:
// the heading's plain text lower-cased, punctuation removed, each space a hyphen; a repeated id
// gets `-1`, `-2`… in document order. A heading with no letter or digit gets `section`. Ours
// rather than markdown-it-anchor: that plugin's default slug keeps punctuation (percent-encoded)
// and so differs from the anchors readers know from GitHub, and ours reuses the plain-text walk
// that the `text` rendering needs anyway (a few lines, no extra dependency).
import type { MarkdownIt } from 'markdown-it'
import { inlineText } from './plain-text.js'

const EMPTY_ID = 'section'

/** The id GitHub gives a heading's text (before de-duplication). */
export function headingSlug (text: string): string {
  const slug = text.trim().toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-')
  return slug === '' ? EMPTY_ID : slug
}

export function headingIds (md: MarkdownIt): void {
  md.core.ruler.push('heading_ids', (state) => {
    const used = new Set<string>()
    // The next suffix to try for each slug, so that many equal headings cost linear time.
    const nextSuffix = new Map<string, number>()
    const { tokens } = state
    tokens.forEach((token, index) => {
      if (token.type !== 'heading_open') return
      const base = headingSlug(inlineText(tokens[index + 1]?.children ?? null))
      let id = base
      let suffix = nextSuffix.get(base) ?? 1
      while (used.has(id)) id = `${base}-${suffix++}`
      nextSuffix.set(base, suffix)
      used.add(id)
      token.attrSet('id', id)
    })
  })
}
