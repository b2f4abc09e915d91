// The front's errors as the client raises them: its RFC 9457 problem documents, typed by kind.
import type { components } from './schema.js'

/** An RFC 9457 problem document, as the front answers every error. */
export type ProblemDocument = components['schemas']['Problem']

/** `urn:blog-read-api:problem:<kind>` */
export type ProblemType = ProblemDocument['type']

/** The kinds of problem, as the front's documentation names them (`post-not-found`, `upstream-timeout`…). */
export type ProblemKind = ProblemType extends `urn:blog-read-api:problem:${infer Kind}` ? Kind : never

const PROBLEM_TYPE_BASE = 'urn:blog-read-api:problem:'

/**
 * An error answer. `problem` is the front's problem document, or, for an answer that is none (a
 * proxy's HTML error page), one of type `about:blank` with the status (RFC 9457 §4.2.1).
 */
export class BlogApiProblem extends Error {
  readonly problem: Omit<ProblemDocument, 'type'> & { type: ProblemType | 'about:blank' }
  readonly status: number
  /** The kind (`post-not-found`…), or undefined for an `about:blank` problem. */
  readonly kind: ProblemKind | undefined
  /** The answer's `Retry-After`, when it has one (503s, and 502/504 while no upstream is in rotation). */
  readonly retryAfter: string | undefined

  constructor (problem: BlogApiProblem['problem'], retryAfter?: string) {
    super(`${problem.status} ${problem.title}: ${problem.detail}`)
    this.name = 'BlogApiProblem'
    this.problem = problem
    this.status = problem.status
    this.kind = problem.type === 'about:blank' ? undefined : problem.type.slice(PROBLEM_TYPE_BASE.length) as ProblemKind
    this.retryAfter = retryAfter
  }
}

/** The problem `response` (an error answer) carries, or an `about:blank` one with its status. */
export async function problemOf (response: Response): Promise<BlogApiProblem['problem']> {
  const text = await response.text()
  if (/json/.test(response.headers.get('content-type') ?? '')) {
    try {
      const body = JSON.parse(text) as Partial<ProblemDocument>
      if (typeof body.type === 'string' && body.type.startsWith(PROBLEM_TYPE_BASE) && typeof body.title === 'string' &&
        typeof body.detail === 'string' && body.status === response.status) {
        return body as ProblemDocument
      }
    } catch {
      // Not JSON after all: described below.
    }
  }
  return { type: 'about:blank', title: response.statusText, status: response.status, detail: `The answer (${response.status}) is not a problem document.` }
}
