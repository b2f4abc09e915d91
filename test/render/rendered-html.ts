// What any rendered HTML must be, whatever the Markdown: only the tags and attributes markdown-it
// writes for CommonMark and GFM, every link and image target http, https, mailto or relative, and
// nothing else unescaped. Shared by the golden and property tests.
import assert from 'node:assert/strict'

const TAGS = new Set(['p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'em', 'strong', 's', 'a', 'img', 'code', 'pre', 'ul', 'ol', 'li',
  'blockquote', 'hr', 'br', 'table', 'thead', 'tbody', 'tr', 'th', 'td'])
const ATTRIBUTES: Record<string, RegExp> = {
  href: /^/,
  src: /^/,
  alt: /^/,
  title: /^/,
  id: /^[^\s]+$/,
  class: /^language-[^\s]*$/,
  style: /^text-align:(?:left|center|right)$/,
  start: /^\d+$/
}
const ALLOWED_PROTOCOLS = new Set(['http:', 'https:', 'mailto:'])
// A tag as markdown-it writes one: a name, then attributes that are name="escaped value".
const TAG = /<(\/?)([a-z0-9]+)((?:\s[a-z]+="[^"<>]*")*)\s*>/g
const ATTRIBUTE = /\s([a-z]+)="([^"]*)"/g
const ENTITY = /&(?:amp|lt|gt|quot);/g
const DECODED: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"' }

export function checkRenderedHtml (html: string): void {
  // Every `<` opens an allowed tag; text holds none (it would be `&lt;`).
  const tags = [...html.matchAll(TAG)]
  const stripped = html.replace(TAG, '')
  assert.ok(!stripped.includes('<') && !stripped.includes('>'), `an unescaped < or > outside the known tags in ${html.slice(0, 300)}`)
  for (const [tag, , name, attributes] of tags) {
    assert.ok(TAGS.has(name!), `tag ${tag}`)
    for (const [, attribute, value] of attributes!.matchAll(ATTRIBUTE)) {
      const rule = ATTRIBUTES[attribute!]
      assert.ok(rule !== undefined && rule.test(value!), `attribute ${attribute}="${value}"`)
      if (attribute === 'href' || attribute === 'src') {
        const target = value!.replace(ENTITY, (entity) => DECODED[entity]!)
        assert.ok(ALLOWED_PROTOCOLS.has(new URL(target, 'https://relative.test/').protocol), `${attribute}="${value}"`)
      }
    }
  }
}
