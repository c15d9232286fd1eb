/** Calls `read` every 100 ms until it gives something other than undefined, for 30 s at most; then fails naming `what`. */
export async function until<T>(what: string, read: () => Promise<T | undefined>): Promise<T> {
  for (let tries = 0; tries < 300; tries++) {
    const found = await read();
    if (found !== undefined) return found;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`gave up waiting for ${what} after 30 s`);
}
