import * as fs from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { add, branch, commit, init, remove, tag } from 'isomorphic-git';

const author = { name: 'gitsync example', email: 'gitsync@example.invalid' };

/**
 * A Git work tree to commit manifests to, for the example's demo and
 * tests: what a user does with `git add` and `git commit`, through
 * isomorphic-git so that no git binary is needed.
 */
export interface WorkTree {
  readonly dir: string;
  /** Writes (or, for `null`, deletes) these files, commits them on the current branch and returns the commit id. */
  commit(files: Readonly<Record<string, string | null>>, message: string): Promise<string>;
  /** Tags the current commit (a lightweight tag). */
  tag(name: string): Promise<void>;
  /** Starts a branch at the current commit. */
  branch(name: string): Promise<void>;
}

/** A new repository in `dir` (created if missing), on branch `main`. */
export async function initWorkTree(dir: string): Promise<WorkTree> {
  await mkdir(dir, { recursive: true });
  await init({ fs, dir, defaultBranch: 'main' });
  return {
    dir,
    commit: async (files, message) => {
      for (const [filepath, text] of Object.entries(files)) {
        const where = join(dir, filepath);
        if (text === null) {
          await rm(where, { force: true });
          await remove({ fs, dir, filepath });
        } else {
          await mkdir(dirname(where), { recursive: true });
          await writeFile(where, text);
          await add({ fs, dir, filepath });
        }
      }
      return commit({ fs, dir, message, author });
    },
    tag: (name) => tag({ fs, dir, ref: name }),
    branch: (name) => branch({ fs, dir, ref: name }),
  };
}
