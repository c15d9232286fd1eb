/**
 * `chunk` as a view made in JavaScript, over the same bytes (nothing is
 * copied). The Buffers Node makes in C++ (the HTTP parser's body chunks)
 * have another hidden class than those JavaScript makes (`subarray`,
 * `Buffer.concat`, `Buffer.from`), and a parser that meets both is
 * deoptimized at the first of the second kind, then reads every byte
 * through code made for two. A list's items are cut out of its chunks and
 * a watch line that spans two chunks is joined, so the readers of a
 * response met both on every page; one view per chunk (a chunk is up to
 * 64 KiB) keeps them to one kind.
 */
export function uniformBuffer(chunk: Buffer): Buffer {
  return chunk.subarray(0);
}
