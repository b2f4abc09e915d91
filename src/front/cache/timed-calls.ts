// The front's upstream calls as the metrics see them: each timed, by outcome
// (src/ops/front-metrics.ts).
import { answerOutcome, failureOutcome, type UpstreamCacheObserver } from '../../ops/front-metrics.js'

/** What a call learns of its answer: its status, once one came. */
export interface Answered { status?: number }

/**
 * Runs one upstream call, timed by outcome when there are metrics; `run` sets `answered.status`
 * when an answer comes (a run that neither got an answer nor failed made no call, and is not counted).
 */
export type TimedCall = <T>(run: (answered: Answered) => Promise<T>) => Promise<T>

export function createTimedCall (observer: UpstreamCacheObserver | undefined): TimedCall {
  return async function timed<T> (run: (answered: Answered) => Promise<T>): Promise<T> {
    const answered: Answered = {}
    if (observer === undefined) return await run(answered)
    const started = performance.now()
    try {
      const result = await run(answered)
      if (answered.status !== undefined) observer.called(answerOutcome(answered.status), performance.now() - started)
      return result
    } catch (err) {
      observer.called(failureOutcome(err, answered.status), performance.now() - started)
      throw err
    }
  }
}
