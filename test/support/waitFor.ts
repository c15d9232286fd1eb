/**
 * Waits for a condition that real I/O will make true (a watch event, a
 * reconnect), checking often, and fails with `what` if it has not happened
 * by the deadline. The deadline is a guard against a hang, not a timing
 * assertion: it is far longer than the condition needs.
 */
export async function waitFor(condition: () => boolean, what: string, deadlineMs = 10_000): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > deadlineMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
