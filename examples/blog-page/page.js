// The example page: lists the posts a page at a time and opens one, with the typed client, from
// another origin than the API's (so the browser applies CORS), and follows the front's change
// stream so that what it shows is read again when a post changes. No framework: the DOM, and text only, except a
// post's `content_html`, which the API renders from Markdown with raw HTML escaped and only
// http, https, mailto and relative links kept, so it is safe to insert as it is.
import { BlogApiProblem, createBlogClient } from './client/index.js'

/** The front API's base URL: `?api=…`, by default the one `npm start` runs. */
const api = new URL(window.location.href).searchParams.get('api') ?? 'http://127.0.0.1:3000'
const client = createBlogClient({ baseUrl: api })
/** Posts per page: `?per-page=…` (1 to 1000), 10 by default. */
const perPage = Number(new URL(window.location.href).searchParams.get('per-page') ?? 10)

const status = document.getElementById('status')
const list = document.getElementById('posts')
const article = document.getElementById('post')
const older = document.getElementById('older')
document.getElementById('api').textContent = api

function show (element) {
  for (const other of [list, article]) other.hidden = other !== element
  older.hidden = element !== list || older.getAttribute('href') === null
  status.hidden = element !== undefined
}

function fail (err) {
  show(undefined)
  status.dataset.error = ''
  status.textContent = err instanceof BlogApiProblem
    ? `${err.problem.title}: ${err.problem.detail}${err.retryAfter === undefined ? '' : ` (retry in ${err.retryAfter} s)`}`
    : `The blog is unreachable (${err.message}).`
  // A missing post (or a malformed link, to a post or a page) leads back to the list.
  if (err instanceof BlogApiProblem && (err.kind === 'post-not-found' || err.kind === 'invalid-slug' || err.kind === 'invalid-query')) {
    const back = document.createElement('a')
    back.href = '#'
    back.className = 'back'
    back.textContent = '← All posts'
    status.append(' ', back)
  }
}

function dateOf (post) {
  return typeof post.published_at === 'string' ? post.published_at.slice(0, 10) : ''
}

/** The page of posts after the cursor `after` (the first page without one), linked to the next. */
async function showList (after) {
  const { posts, after: next } = await client.listPage({ limit: perPage, after })
  // The next page's cursor goes in the URL, so that the page can be bookmarked and Back works.
  if (next === undefined) older.removeAttribute('href')
  else older.href = `#/after/${encodeURIComponent(next)}`
  list.replaceChildren(...posts.map((post) => {
    const item = document.createElement('li')
    const link = document.createElement('a')
    link.href = `#/posts/${encodeURIComponent(post.slug)}`
    link.textContent = typeof post.title === 'string' ? post.title : post.slug
    const date = document.createElement('time')
    date.textContent = ` ${dateOf(post)}`
    const summary = document.createElement('p')
    summary.textContent = typeof post.summary === 'string' ? post.summary : ''
    item.append(link, date, summary)
    return item
  }))
  if (posts.length === 0) {
    status.textContent = after === undefined ? 'No posts yet.' : 'No older posts.'
    return
  }
  show(list)
}

async function showPost (slug) {
  const post = await client.getPost(slug, { formats: ['html'] })
  article.querySelector('h2').textContent = typeof post.title === 'string' ? post.title : post.slug
  article.querySelector('.meta').textContent = [post.author, dateOf(post)].filter((part) => typeof part === 'string' && part !== '').join(' · ')
  article.querySelector('.summary').textContent = typeof post.summary === 'string' ? post.summary : ''
  const content = article.querySelector('.content')
  if (typeof post.content_html === 'string') content.innerHTML = post.content_html
  else content.textContent = typeof post.content === 'string' ? post.content : JSON.stringify(post, null, 2)
  show(article)
}

/** The slug of the post shown, or undefined for the list. */
function shownSlug () {
  const slug = /^#\/posts\/(.+)$/.exec(window.location.hash)?.[1]
  return slug === undefined ? undefined : decodeURIComponent(slug)
}

/** The cursor of the list page shown (`#/after/…`), or undefined for the first page. */
function shownCursor () {
  const after = /^#\/after\/(.+)$/.exec(window.location.hash)?.[1]
  return after === undefined ? undefined : decodeURIComponent(after)
}

/** Shows what the address names; `quietly`: in place, without "Loading…" (a live update). */
async function route ({ quietly = false } = {}) {
  if (!quietly) {
    status.hidden = false
    delete status.dataset.error
    status.textContent = 'Loading…'
  }
  const slug = shownSlug()
  try {
    await (slug === undefined ? showList(shownCursor()) : showPost(slug))
  } catch (err) {
    fail(err)
  }
}

/**
 * Reads the page again when a change touches what it shows: the list on any change, a post when
 * it changed or went. The watch reconnects by itself; a front without a change stream (404) leaves
 * the page as it is.
 */
async function followChanges () {
  try {
    for await (const event of client.watch()) {
      const slug = shownSlug()
      if (event.type === 'expired' || slug === undefined || event.upserted.includes(slug) || event.deleted.includes(slug)) {
        await route({ quietly: true })
      }
    }
  } catch {
    // No change stream here: the page shows what it read.
  }
}

window.addEventListener('hashchange', () => route())
route()
followChanges()
