// Size limits on post and list bodies: design constants, not settings.

/** A list up to this size is handled whole (built, checked, cached, tagged from its bytes); above it, streamed. Both tiers. */
export const LIST_BUFFER_LIMIT = 8 * 1024 * 1024

/** The front's bounds on what it reads from the upstream, and where it starts relaying a list as a stream. */
export interface BodyLimits {
  /** Largest upstream list read or relayed (beyond it: 502, or a cut-off stream). */
  maxListBytes: number
  /** Largest upstream post body read (beyond it: 502). */
  maxPostBytes: number
  /** Lists above this size are relayed as a stream (first bytes checked) instead of checked whole. */
  listBufferLimit: number
}

export const BODY_LIMITS: Readonly<BodyLimits> = {
  maxListBytes: 1024 * 1024 * 1024,
  maxPostBytes: 1024 * 1024,
  listBufferLimit: LIST_BUFFER_LIMIT
}
