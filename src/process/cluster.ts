// One process per core: with WORKERS > 1, `serve`, `front` and
// `posts-api` run in node:cluster workers that share the listening ports. The primary serves
// nothing: it forks the workers, replaces one that dies (with a back-off, so a crash loop does not
// spin), and on SIGINT/SIGTERM drains them all, each closing gracefully as a lone process does.
import cluster, { type Worker } from 'node:cluster'
import type { Logger } from 'pino'

/** What a worker tells the primary over the cluster's IPC channel. */
type WorkerMessage =
  | { type: 'blog-read-api:ready' }
  | { type: 'blog-read-api:start-failed', line: string, exitCode: number }

/** The first replacement waits this long; each further quick death doubles it, up to the maximum. */
const RESPAWN_FIRST_DELAY_MS = 100
const RESPAWN_MAX_DELAY_MS = 30_000
/** A worker that lived this long was healthy: its death starts the back-off afresh. */
const STABLE_AFTER_MS = 10_000
/** Past SHUTDOWN_TIMEOUT_MS each worker ends itself (exit 1); the primary kills what is left after this margin. */
const KILL_MARGIN_MS = 2000

/** The worker's cluster id (1, 2, … and higher for replacements), or undefined outside a worker. */
export function workerId (): number | undefined {
  return cluster.worker?.id
}

/** True in the process that should fork workers rather than serve (WORKERS > 1, not a worker itself). */
export function isFleetPrimary (workers: number): boolean {
  return workers > 1 && cluster.isPrimary
}

/** In a worker: tells the primary that this worker serves. */
export function reportReady (): void {
  cluster.worker?.send({ type: 'blog-read-api:ready' } satisfies WorkerMessage)
}

/**
 * In a worker that could not start: hands its one line to the primary, which prints it once for
 * all workers (they would all fail alike), and exits.
 */
export function reportStartFailure (line: string, exitCode: number): void {
  const exit = (): never => process.exit(exitCode)
  if (cluster.worker === undefined) exit()
  cluster.worker?.send({ type: 'blog-read-api:start-failed', line, exitCode } satisfies WorkerMessage, exit)
}

/**
 * In a worker whose servers have closed: leaves the cluster, so the process can end (its IPC
 * channel would keep it alive) and the primary knows the exit was meant.
 */
export function leaveCluster (): void {
  cluster.worker?.disconnect()
}

/** A worker failed during the first start-up: its line, printed once, and its exit code. */
export class WorkerStartError extends Error {
  constructor (message: string, readonly exitCode: number) {
    super(message)
    this.name = 'WorkerStartError'
  }
}

export interface FleetOptions {
  workers: number
  /** The primary's logger (the workers log for themselves). */
  logger: Logger
  shutdownTimeoutMs: number
}

/**
 * In the primary: forks the workers and resolves once all of them serve; rejects with a
 * WorkerStartError if one fails to start (the others are stopped first). Afterwards the fleet
 * runs until SIGINT/SIGTERM, then exits the process: 0 when every worker closed gracefully.
 */
export async function runFleet (options: FleetOptions): Promise<void> {
  await new WorkerFleet(options).start()
}

interface WorkerState {
  forkedAt: number
  ready: boolean
  /** The line a worker reported when it could not start. */
  failure?: { line: string, exitCode: number }
}

class WorkerFleet {
  readonly #size: number
  readonly #logger: Logger
  readonly #shutdownTimeoutMs: number
  #phase: 'starting' | 'running' | 'stopping' = 'starting'
  readonly #workers = new Map<Worker, WorkerState>()
  readonly #respawns = new Set<NodeJS.Timeout>()
  /** Consecutive deaths of workers that lived less than STABLE_AFTER_MS. */
  #quickDeaths = 0
  /** False once a worker did not close gracefully during the shutdown. */
  #graceful = true
  #started = { resolve: (): void => {}, reject: (_err: Error): void => {} }
  #whenAllExited: (() => void) | undefined

  constructor ({ workers, logger, shutdownTimeoutMs }: FleetOptions) {
    this.#size = workers
    this.#logger = logger
    this.#shutdownTimeoutMs = shutdownTimeoutMs
  }

  async start (): Promise<void> {
    const started = new Promise<void>((resolve, reject) => { this.#started = { resolve, reject } })
    cluster.on('message', (worker, message: unknown) => this.#onMessage(worker, message as Partial<WorkerMessage> | null))
    cluster.on('exit', (worker, code, signal) => this.#onExit(worker, code, signal))
    // `on`, not `once`: a second signal (a Ctrl-C forwarded by npm as well) must not end the
    // primary while its workers drain.
    process.on('SIGINT', () => this.#stop('SIGINT'))
    process.on('SIGTERM', () => this.#stop('SIGTERM'))
    this.#logger.info(`starting ${this.#size} workers`)
    for (let i = 0; i < this.#size; i++) this.#fork()
    await started
  }

  #fork (): void {
    this.#workers.set(cluster.fork(), { forkedAt: performance.now(), ready: false })
  }

  #onMessage (worker: Worker, message: Partial<WorkerMessage> | null): void {
    const state = this.#workers.get(worker)
    if (state === undefined) return
    if (message?.type === 'blog-read-api:start-failed') {
      state.failure = { line: String(message.line), exitCode: Number(message.exitCode) }
    } else if (message?.type === 'blog-read-api:ready') {
      state.ready = true
      if (this.#phase === 'running') {
        this.#logger.info({ workerId: worker.id, workerPid: worker.process.pid }, `worker ${worker.id} (pid ${worker.process.pid}) serving`)
      } else if (this.#phase === 'starting' && [...this.#workers.values()].filter((s) => s.ready).length === this.#size) {
        this.#phase = 'running'
        this.#logger.info(`all ${this.#size} workers serving`)
        this.#started.resolve()
      }
    }
  }

  #onExit (worker: Worker, code: number | null, signal: string | null): void {
    const state = this.#workers.get(worker)
    if (state === undefined) return
    this.#workers.delete(worker)
    const how = signal === null ? `code ${code}` : signal
    if (this.#phase === 'stopping') {
      // A worker still starting served nothing: however it ends, nothing was lost.
      if (state.ready && code !== 0) {
        this.#graceful = false
        this.#logger.error({ workerId: worker.id, workerPid: worker.process.pid }, `worker ${worker.id} ended with ${how} while closing`)
      }
      if (this.#workers.size === 0) this.#whenAllExited?.()
      return
    }
    if (this.#phase === 'starting' && !state.ready) {
      // Start-up failures are the user's to fix (a port in use, a store gone since the check):
      // one line and an exit code, as a lone process gives, not a respawn loop.
      this.#failStart(state.failure ?? { line: `worker ${worker.id} ended during start-up (${how})`, exitCode: 1 })
      return
    }
    this.#quickDeaths = performance.now() - state.forkedAt < STABLE_AFTER_MS ? this.#quickDeaths + 1 : 1
    const delay = Math.min(RESPAWN_FIRST_DELAY_MS * 2 ** (this.#quickDeaths - 1), RESPAWN_MAX_DELAY_MS)
    const why = state.failure === undefined ? `ended with ${how}` : `could not start: ${state.failure.line}`
    this.#logger.error({ workerId: worker.id, workerPid: worker.process.pid, code, signal },
      `worker ${worker.id} (pid ${worker.process.pid}) ${why}; replacing it in ${delay} ms`)
    const timer = setTimeout(() => {
      this.#respawns.delete(timer)
      this.#fork()
    }, delay)
    this.#respawns.add(timer)
  }

  /** Stops the workers still starting or serving, then rejects start(). */
  #failStart (failure: { line: string, exitCode: number }): void {
    this.#phase = 'stopping'
    this.#whenAllExited = () => this.#started.reject(new WorkerStartError(failure.line, failure.exitCode))
    this.#signalAll('SIGTERM')
    if (this.#workers.size === 0) this.#whenAllExited()
  }

  /** SIGINT/SIGTERM: every worker drains as a lone process would; exit 0 once all closed gracefully. */
  #stop (signal: string): void {
    if (this.#phase === 'stopping') return
    const wasStarting = this.#phase === 'starting'
    this.#phase = 'stopping'
    for (const timer of this.#respawns) clearTimeout(timer)
    this.#respawns.clear()
    this.#logger.info(`${signal} received; closing ${this.#workers.size} workers`)
    const force = setTimeout(() => {
      this.#logger.error(`workers still running ${this.#shutdownTimeoutMs + KILL_MARGIN_MS} ms after ${signal}; killing them`)
      this.#graceful = false
      this.#signalAll('SIGKILL')
    }, this.#shutdownTimeoutMs + KILL_MARGIN_MS).unref()
    this.#whenAllExited = () => {
      clearTimeout(force)
      process.exit(this.#graceful ? 0 : 1)
    }
    this.#signalAll('SIGTERM')
    if (wasStarting) this.#started.resolve()
    if (this.#workers.size === 0) this.#whenAllExited()
  }

  #signalAll (signal: NodeJS.Signals): void {
    for (const worker of this.#workers.keys()) worker.process.kill(signal)
  }
}
