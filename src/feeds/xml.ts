// Text and attribute values for the XML documents we write (RSS, Atom, sitemaps). Every value
// is escaped, never wrapped in CDATA, so a `]]>` in a title or a post needs no special case. The
// characters XML 1.0 forbids anywhere, even as references (C0 controls other than tab, newline and
// carriage return; lone surrogates; U+FFFE and U+FFFF), are dropped: a document holding one is not
// well-formed, and a reader refuses the whole feed for one stray byte in one post.

// Tab, newline and carriage return are the only C0 controls XML 1.0 allows.
const FORBIDDEN = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g // eslint-disable-line no-control-regex
const SPECIAL = /[&<>"']/g
const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' }

/** `value` as XML character data or an attribute value (either quote): escaped, forbidden characters dropped. */
export function escapeXml (value: string): string {
  return value.replace(FORBIDDEN, '').replace(SPECIAL, (char) => ENTITIES[char]!)
}

/** An element holding text: `<name>escaped text</name>`. */
export function textElement (name: string, value: string): string {
  return `<${name}>${escapeXml(value)}</${name}>`
}

export const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n'
