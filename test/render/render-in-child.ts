// Renders and checks in child processes, so that a test can give up on a rendering that does not
// end (a test's own time-out cannot interrupt synchronous code; a process can be killed), and so
// that the rendering and the check of its HTML (a million tags for some shapes) run without the
// coverage instrumentation of the test run (NODE_V8_COVERAGE), which slows markdown-it's inner
// loops several times over and would turn this hang detector into a speed test of the
// instrumentation. The renderer's coverage comes from the other tests. Only the verdict and a
// few figures cross back, not the megabytes of HTML. A child renders one source after another,
// so that the sources of a file share the cost of starting one (loading tsx and the renderer).
import { fork, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { createMarkdownRenderer } from '../../src/render/markdown-renderer.js'
import { checkRenderedHtml } from './rendered-html.js'

const CHILD = 'BLOG_READ_API_RENDER_CHILD'
const READY = 'ready'

/** What a child says of one source: why its HTML fails the check ('' when it passes), and what it rendered. */
export interface Rendering {
  failure: string
  htmlLength: number
  wordCount: number
  textStart: string
}

if (process.env[CHILD] === '1' && process.send !== undefined) {
  const render = createMarkdownRenderer()
  process.on('message', (source: string) => {
    const { html, text, wordCount } = render(source)
    let failure = ''
    try {
      checkRenderedHtml(html)
    } catch (err) {
      failure = err instanceof Error ? err.message : String(err)
    }
    const rendering: Rendering = { failure, htmlLength: html.length, wordCount, textStart: text.slice(0, 100) }
    process.send?.(rendering)
  })
  // A message that arrives before the listener above is lost (the child reads its channel while
  // its modules still load), so the parent sends a source only once told the child listens.
  process.send(READY)
}

interface Renderer { child: ChildProcess, ready: Promise<void> }

function startRenderer (): Renderer {
  // Empty, not absent: Node copies the parent's NODE_V8_COVERAGE into a child's environment that
  // lacks it (so that coverage follows child processes), and an empty value turns it off.
  const child = fork(fileURLToPath(import.meta.url), [], {
    env: { ...process.env, NODE_V8_COVERAGE: '', [CHILD]: '1' },
    execArgv: ['--import', import.meta.resolve('tsx')],
    serialization: 'advanced'
  })
  const ready = new Promise<void>((resolve, reject) => {
    child.once('message', () => { resolve() })
    child.once('exit', (code) => { reject(new Error(`the renderer exited with ${code} before it listened`)) })
  })
  ready.catch(() => {}) // seen by the first rendering that waits on it
  return { child, ready }
}

/** Up to `size` renderers, each rendering one source at a time; a rendering waits for an idle one. */
export interface RendererPool {
  /** What `source` renders to, once a renderer took it; rejects when that takes longer than `limitMs` (the renderer is then killed). */
  render: (source: string, limitMs: number) => Promise<Rendering>
  close: () => void
}

export function rendererPool (size: number): RendererPool {
  const idle: Renderer[] = []
  const waiting: Array<(renderer: Renderer) => void> = []
  const all = new Set<Renderer>()
  let started = 0

  const take = async (): Promise<Renderer> => {
    const renderer = idle.pop()
    if (renderer !== undefined) return renderer
    if (started < size) {
      started++
      const fresh = startRenderer()
      all.add(fresh)
      return fresh
    }
    return await new Promise((resolve) => waiting.push(resolve))
  }
  const giveBack = (renderer: Renderer): void => {
    const next = waiting.shift()
    if (next !== undefined) next(renderer)
    else idle.push(renderer)
  }
  const discard = (renderer: Renderer): void => {
    renderer.child.kill('SIGKILL')
    all.delete(renderer)
    started--
    // Whoever waits gets a renderer of its own instead.
    const next = waiting.shift()
    if (next !== undefined) take().then(next, () => {})
  }

  return {
    render: async (source, limitMs) => {
      const renderer = await take()
      try {
        await renderer.ready
        const rendering = await new Promise<Rendering>((resolve, reject) => {
          const { child } = renderer
          const timer = setTimeout(() => { settle(); reject(new Error(`no rendering within ${limitMs} ms`)) }, limitMs)
          const onMessage = (message: Rendering): void => { settle(); resolve(message) }
          const onExit = (code: number | null): void => { settle(); reject(new Error(`the renderer exited with ${code} before answering`)) }
          const settle = (): void => {
            clearTimeout(timer)
            child.off('message', onMessage)
            child.off('exit', onExit)
          }
          child.on('message', onMessage)
          child.on('exit', onExit)
          child.send(source)
        })
        giveBack(renderer)
        return rendering
      } catch (err) {
        discard(renderer)
        throw err
      }
    },
    close: () => {
      for (const renderer of all) renderer.child.kill('SIGKILL')
      all.clear()
    }
  }
}
