// The plain text of a parsed Markdown document: what a search snippet, an excerpt or a word
// count is made from. Markup, link targets and image sources are left out; link text, image alt
// text and code are kept. Each block (paragraph, heading, list item, code block, table row) is a
// line of its own; a soft line break is a space, a hard one a newline; table cells are separated
// by a space.
import type { Token } from 'markdown-it'

/** The text of an inline token's children (a paragraph's, a heading's, a table cell's). */
export function inlineText (children: readonly Token[] | null): string {
  let text = ''
  for (const token of children ?? []) {
    switch (token.type) {
      case 'text':
      case 'code_inline':
        text += token.content
        break
      case 'softbreak':
        text += ' '
        break
      case 'hardbreak':
        text += '\n'
        break
      case 'image':
        // markdown-it keeps the alt text as the image's children.
        text += inlineText(token.children)
        break
    }
  }
  return text
}

/** The document's text, one line per block, with no trailing newline. */
export function plainText (tokens: readonly Token[]): string {
  const lines: string[] = []
  let row: string[] | undefined
  for (const token of tokens) {
    switch (token.type) {
      case 'tr_open':
        row = []
        break
      case 'tr_close':
        lines.push((row ?? []).join(' '))
        row = undefined
        break
      case 'inline': {
        // Trimmed: a dropped comment may leave a space at either end.
        const text = inlineText(token.children).trim()
        if (row !== undefined) row.push(text)
        else lines.push(text)
        break
      }
      case 'fence':
      case 'code_block':
        // The code's own lines, without the newline that closes the block.
        lines.push(token.content.replace(/\n$/, ''))
        break
    }
  }
  return lines.filter((line) => line.trim() !== '').join('\n')
}
