// Atom 1.0 (RFC 4287). Entry ids are the posts' URLs: stable as long as the URL template is, and
// what readers use to tell posts apart. Atom requires of each entry an author and an `updated`
// date: an entry with no author of its own is the feed's (else the feed's title), and one with no
// date at all takes the feed's `updated`.
import { feedContents, type Feed, type FeedEntry } from './feed.js'
import { escapeXml, textElement, XML_DECLARATION } from './xml.js'

export const ATOM_CONTENT_TYPE = 'application/atom+xml; charset=utf-8'

export function writeAtom (feed: Feed): string {
  const { updated, entries } = feedContents(feed)
  const language = feed.language === undefined ? '' : ` xml:lang="${escapeXml(feed.language)}"`
  const head = [
    textElement('id', feed.selfUrl ?? feed.homeUrl),
    textElement('title', feed.title),
    feed.description === undefined ? '' : textElement('subtitle', feed.description),
    textElement('updated', updated.toISOString()),
    `<link rel="alternate" type="text/html" href="${escapeXml(feed.homeUrl)}"/>`,
    feed.selfUrl === undefined ? '' : `<link rel="self" type="application/atom+xml" href="${escapeXml(feed.selfUrl)}"/>`
  ]
  const fallbackAuthor = feed.author ?? feed.title
  return XML_DECLARATION +
    `<feed xmlns="http://www.w3.org/2005/Atom"${language}>\n${head.filter(Boolean).join('\n')}\n` +
    `${entries.map((entry) => atomEntry(entry, fallbackAuthor, updated)).join('')}</feed>\n`
}

function atomEntry (entry: FeedEntry, fallbackAuthor: string, feedUpdated: Date): string {
  const lines = [
    textElement('id', entry.url),
    textElement('title', entry.title),
    textElement('updated', (entry.updated ?? feedUpdated).toISOString()),
    entry.published === undefined ? '' : textElement('published', entry.published.toISOString()),
    `<link rel="alternate" type="text/html" href="${escapeXml(entry.url)}"/>`,
    `<author>${textElement('name', entry.author ?? fallbackAuthor)}</author>`,
    ...entry.tags.map((tag) => `<category term="${escapeXml(tag)}"/>`),
    entry.summary === undefined ? '' : `<summary type="text">${escapeXml(entry.summary)}</summary>`,
    entry.html === undefined ? '' : `<content type="html">${escapeXml(entry.html)}</content>`
  ]
  return `<entry>\n${lines.filter(Boolean).join('\n')}\n</entry>\n`
}
