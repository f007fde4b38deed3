// A bound on how long an ops probe waits for a Promise (the journal's sync, the chain's head):
// `Effect.timeoutFail` instead of a hand-rolled race, so the timer is interrupted as soon as the
// Promise settles. Rejects with the Promise's own error, or with `onTimeout`'s after `ms`.
import { Cause, Duration, Effect, Exit } from "effect"

export const within = async <A>(p: () => Promise<A>, ms: number, onTimeout: () => Error): Promise<A> => {
  const exit = await Effect.runPromiseExit(
    Effect.tryPromise({ try: p, catch: (err) => err }).pipe(Effect.timeoutFail({ duration: Duration.millis(ms), onTimeout }))
  )
  if (Exit.isSuccess(exit)) return exit.value
  throw Cause.squash(exit.cause)
}
