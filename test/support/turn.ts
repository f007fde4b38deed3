// One turn of the event loop, for tests that compute synchronously for long. Vitest's worker
// talks to its main process by messages it must answer within 60 s; a message sent just before
// a long synchronous block is answered, but the answer waits in the queue, and when the block
// ends the 60 s timer runs first: "[vitest-worker]: Timeout calling onTaskUpdate", a red run
// with every test green (seen beside two CPU hogs, issue 31). A turn between the pieces of such
// a test lets the answers in. Not a wait for time: it returns as soon as the loop has turned.
export const eventLoopTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))
