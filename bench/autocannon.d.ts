// The part of autocannon's programmatic API the benchmark uses (the package ships no types).
declare module 'autocannon' {
  export interface AutocannonRequest {
    method?: string
    path?: string
    headers?: Record<string, string>
    /** Called before each request; returns the request to send. */
    setupRequest?: (request: AutocannonRequest) => AutocannonRequest
  }

  export interface AutocannonOptions {
    url: string
    connections?: number
    /** Seconds. */
    duration?: number
    /** Seconds a request may take before it counts as a timeout (and an error). */
    timeout?: number
    requests?: AutocannonRequest[]
  }

  /** One run's figures before aggregation (`skipAggregateResult`), so runs can be merged. */
  export interface RawResult {
    /** Seconds. */
    duration: number
    totalCompletedRequests: number
    /** Bytes read: status lines, headers and bodies. */
    totalBytes: number
  }

  export interface Histogram {
    average: number
    p50: number
    p99: number
    max: number
    total: number
  }

  export interface AutocannonResult {
    /** Milliseconds, in whole milliseconds. */
    latency: Histogram
    /** Errors, timeouts included. */
    errors: number
    timeouts: number
    statusCodeStats: Record<string, { count: number }>
  }

  export default function autocannon (options: AutocannonOptions & { skipAggregateResult: true }): PromiseLike<RawResult>

  /** Merges runs: latency histograms, status counts, errors. */
  export function aggregateResult (results: RawResult[], options: AutocannonOptions): AutocannonResult
}
