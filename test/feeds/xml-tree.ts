// XML documents read back by a strict XML 1.0 parser (saxes, namespace-aware): any well-formedness
// error (a bare `&`, `]]>` in text, a forbidden character, an unbound prefix, a second root) fails
// the test. The document becomes a small tree of elements named by namespace and local name.
import { SaxesParser } from 'saxes'

export interface XmlElement {
  uri: string
  local: string
  attributes: Record<string, string>
  children: XmlElement[]
  /** The element's own text (its children's text excluded). */
  text: string
}

export const NS = {
  atom: 'http://www.w3.org/2005/Atom',
  content: 'http://purl.org/rss/1.0/modules/content/',
  dc: 'http://purl.org/dc/elements/1.1/',
  sitemap: 'http://www.sitemaps.org/schemas/sitemap/0.9',
  none: ''
} as const

export function parseXml (document: string): XmlElement {
  const parser = new SaxesParser({ xmlns: true })
  const stack: XmlElement[] = []
  let root: XmlElement | undefined
  let error: Error | undefined
  parser.on('error', (err) => { error ??= err })
  parser.on('opentag', (tag) => {
    const attributes = Object.fromEntries(Object.values(tag.attributes).map((attribute) => [attribute.local, attribute.value]))
    const element: XmlElement = { uri: tag.uri, local: tag.local, attributes, children: [], text: '' }
    stack.at(-1)?.children.push(element)
    root ??= element
    stack.push(element)
  })
  parser.on('text', (text) => {
    const current = stack.at(-1)
    if (current !== undefined) current.text += text
  })
  parser.on('closetag', () => { stack.pop() })
  parser.write(document).close()
  if (error !== undefined) throw error
  if (root === undefined) throw new Error('no root element')
  return root
}

/** The children of `element` with this namespace and local name. */
export function childrenNamed (element: XmlElement, uri: string, local: string): XmlElement[] {
  return element.children.filter((child) => child.uri === uri && child.local === local)
}

/** The one child with this name (fails when there is none or more than one). */
export function child (element: XmlElement, uri: string, local: string): XmlElement {
  const found = childrenNamed(element, uri, local)
  if (found.length !== 1) throw new Error(`<${element.local}> has ${found.length} <${local}> children in ${uri || 'no namespace'}`)
  return found[0]!
}

/** The text of the one child with this name. */
export function childText (element: XmlElement, uri: string, local: string): string {
  return child(element, uri, local).text
}
