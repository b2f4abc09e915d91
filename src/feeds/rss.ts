// RSS 2.0 (https://www.rssboard.org/rss-specification), with the full content in
// `content:encoded` (the RSS content module) and authors as `dc:creator`: RSS's own `author`
// must be an e-mail address, which posts do not have.
import { feedContents, type Feed, type FeedEntry } from './feed.js'
import { escapeXml, textElement, XML_DECLARATION } from './xml.js'

export const RSS_CONTENT_TYPE = 'application/rss+xml; charset=utf-8'

export function writeRss (feed: Feed): string {
  const { updated, entries } = feedContents(feed)
  const channel = [
    textElement('title', feed.title),
    textElement('link', feed.homeUrl),
    // Required; a feed with no description repeats its title rather than leave it empty.
    textElement('description', feed.description ?? feed.title),
    feed.language === undefined ? '' : textElement('language', feed.language),
    textElement('lastBuildDate', updated.toUTCString()),
    feed.selfUrl === undefined ? '' : `<atom:link href="${escapeXml(feed.selfUrl)}" rel="self" type="application/rss+xml"/>`
  ]
  return XML_DECLARATION +
    '<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:atom="http://www.w3.org/2005/Atom">\n' +
    `<channel>\n${channel.filter(Boolean).join('\n')}\n${entries.map(item).join('')}</channel>\n</rss>\n`
}

function item (entry: FeedEntry): string {
  const lines = [
    textElement('title', entry.title),
    textElement('link', entry.url),
    `<guid isPermaLink="true">${escapeXml(entry.url)}</guid>`,
    entry.published === undefined ? '' : textElement('pubDate', entry.published.toUTCString()),
    entry.author === undefined ? '' : textElement('dc:creator', entry.author),
    ...entry.tags.map((tag) => textElement('category', tag)),
    entry.summary === undefined ? '' : textElement('description', entry.summary),
    entry.html === undefined ? '' : textElement('content:encoded', entry.html)
  ]
  return `<item>\n${lines.filter(Boolean).join('\n')}\n</item>\n`
}
