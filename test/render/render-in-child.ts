// Renders and checks in a child process, so that a test can give up on a rendering that does not
// end (a test's own time-out cannot interrupt synchronous code; a process can be killed), and so
// that the rendering and the check of its HTML (a million tags for some shapes) run without the
// coverage instrumentation of the test run (NODE_V8_COVERAGE), which slows markdown-it's inner
// loops several times over and would turn this hang detector into a speed test of the
// instrumentation. The renderer's coverage comes from the other tests. Only the verdict crosses
// back, not the megabytes of HTML.
import { fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { createMarkdownRenderer } from '../../src/render/markdown-renderer.js'
import { checkRenderedHtml } from './rendered-html.js'

const CHILD = 'BLOG_READ_API_RENDER_CHILD'
const READY = { ready: true }

if (process.env[CHILD] === '1' && process.send !== undefined) {
  const render = createMarkdownRenderer()
  process.on('message', (source: string) => {
    let verdict = ''
    try {
      checkRenderedHtml(render(source).html)
    } catch (err) {
      verdict = err instanceof Error ? err.message : String(err)
    }
    process.send?.(verdict, () => process.exit(0))
  })
  // A message that arrives before the listener above is lost (the child reads its channel while
  // its modules still load), so the parent sends the source only once told the child listens.
  process.send(READY)
}

/**
 * Resolves when `source` renders to HTML that passes checkRenderedHtml; rejects when it does not,
 * or when rendering and checking take longer than `limitMs`.
 */
export async function renderAndCheckWithin (source: string, limitMs: number): Promise<void> {
  // Empty, not absent: Node copies the parent's NODE_V8_COVERAGE into a child's environment that
  // lacks it (so that coverage follows child processes), and an empty value turns it off.
  const child = fork(fileURLToPath(import.meta.url), [], {
    env: { ...process.env, NODE_V8_COVERAGE: '', [CHILD]: '1' },
    execArgv: ['--import', import.meta.resolve('tsx')],
    serialization: 'advanced'
  })
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no rendering within ${limitMs} ms`)), limitMs)
      child.on('message', (message) => {
        if (typeof message === 'object' && message !== null && 'ready' in message) {
          child.send(source)
          return
        }
        clearTimeout(timer)
        if (message === '') resolve()
        else reject(new Error(`the rendered HTML fails its check: ${String(message)}`))
      })
      child.once('error', (err) => { clearTimeout(timer); reject(err) })
      child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`the renderer exited with ${code} before answering`)) })
    })
  } finally {
    child.kill('SIGKILL')
  }
}
