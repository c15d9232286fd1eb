import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { clone, expandOid, fetch, readBlob, readObject, readTree, resolveRef, type TreeEntry } from 'isomorphic-git';
import http from 'isomorphic-git/http/node';

/** Why a revision could not be read: the reason is the Application's condition reason. */
export class RevisionError extends Error {
  override readonly name = 'RevisionError';
  constructor(
    readonly reason: 'RepositoryUnreadable' | 'RevisionNotFound' | 'PathNotFound',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** One file of the folder at a commit, its path relative to the repository's root. */
export interface RepositoryFile {
  path: string;
  text: string;
}

const isRemote = (repoURL: string) => /^https?:\/\//i.test(repoURL);

/**
 * The git directory to read `repoURL` from. A local path is read where it
 * is (its `.git`, or the path itself when bare), so a commit made there is
 * seen at the next read. A URL is cloned once (bare, into `cacheDir`) and
 * fetched at every read, so branches and tags move as they do upstream.
 */
export async function gitdirOf(repoURL: string, cacheDir: string, signal?: AbortSignal): Promise<{ gitdir: string; remote: boolean }> {
  if (!isRemote(repoURL)) {
    const path = repoURL.startsWith('file://') ? new URL(repoURL).pathname : repoURL;
    const dotGit = join(path, '.git');
    const gitdir = fs.existsSync(dotGit) ? dotGit : path;
    if (!fs.existsSync(join(gitdir, 'HEAD'))) throw new RevisionError('RepositoryUnreadable', `${repoURL} is no Git repository (no ${join(gitdir, 'HEAD')})`);
    return { gitdir, remote: false };
  }
  const gitdir = join(cacheDir, createHash('sha256').update(repoURL).digest('hex').slice(0, 16));
  try {
    if (!fs.existsSync(join(gitdir, 'HEAD'))) {
      await clone({ fs, http, gitdir, dir: gitdir, url: repoURL, noCheckout: true });
    } else {
      signal?.throwIfAborted();
      await fetch({ fs, http, gitdir, url: repoURL, tags: true, prune: true, pruneTags: true });
    }
  } catch (err) {
    // A clone cut short would look like a repository to the next read: start it again from nothing.
    if (!fs.existsSync(join(gitdir, 'refs', 'remotes'))) fs.rmSync(gitdir, { recursive: true, force: true });
    throw new RevisionError('RepositoryUnreadable', `cannot fetch ${repoURL}: ${(err as Error).message}`, { cause: err });
  }
  return { gitdir, remote: true };
}

/**
 * The commit a revision names: a branch (a remote one first, for a
 * cloned repository), a tag (annotated tags peeled to their commit),
 * `HEAD`, a full ref, or a commit id, full or abbreviated.
 */
export async function resolveRevision(gitdir: string, revision: string, remote: boolean): Promise<string> {
  const candidates = remote && !revision.startsWith('refs/') ? [`refs/remotes/origin/${revision}`, revision] : [revision];
  for (const ref of candidates) {
    try {
      return await peel(gitdir, await resolveRef({ fs, gitdir, ref }));
    } catch (err) {
      if ((err as { code?: string }).code !== 'NotFoundError') throw new RevisionError('RepositoryUnreadable', `cannot read ${revision}: ${(err as Error).message}`, { cause: err });
    }
  }
  if (/^[0-9a-f]{4,40}$/i.test(revision)) {
    try {
      return await peel(gitdir, await expandOid({ fs, gitdir, oid: revision.toLowerCase() }));
    } catch (err) {
      if ((err as { code?: string }).code === 'AmbiguousError') throw new RevisionError('RevisionNotFound', `revision ${revision} is ambiguous: give more of the commit id`, { cause: err });
    }
  }
  throw new RevisionError('RevisionNotFound', `revision "${revision}" is no branch, tag or commit of the repository`);
}

/** An annotated tag (or a chain of them) down to its commit. */
async function peel(gitdir: string, oid: string): Promise<string> {
  let current = oid;
  for (let depth = 0; depth < 10; depth++) {
    const object = await readObject({ fs, gitdir, oid: current, format: 'parsed' });
    if (object.type === 'commit') return current;
    if (object.type !== 'tag') throw new RevisionError('RevisionNotFound', `${oid} is a ${object.type}, not a commit`);
    current = (object.object as { object: string }).object;
  }
  throw new RevisionError('RevisionNotFound', `${oid}: tags nested too deep`);
}

/**
 * The manifest files under `path` at `commit` (those `accept` takes), in
 * path order; the folders below too with `recurse`. Reads objects only:
 * no work tree is checked out or needed.
 */
export async function readFolder(gitdir: string, commit: string, path: string, recurse: boolean, accept: (name: string) => boolean): Promise<RepositoryFile[]> {
  const root = path.replace(/^\.?\/+|\/+$/g, '').replace(/^\.$/, '');
  let entries: TreeEntry[];
  try {
    entries = (await readTree({ fs, gitdir, oid: commit, ...(root !== '' ? { filepath: root } : {}) })).tree;
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'NotFoundError' || code === 'ObjectTypeError') throw new RevisionError('PathNotFound', `path "${path}" is no folder at commit ${commit.slice(0, 7)}`, { cause: err });
    throw new RevisionError('RepositoryUnreadable', `cannot read commit ${commit.slice(0, 7)}: ${(err as Error).message}`, { cause: err });
  }
  const files: RepositoryFile[] = [];
  const prefix = root === '' ? '' : `${root}/`;
  for (const entry of entries) {
    const full = `${prefix}${entry.path}`;
    if (entry.type === 'blob' && accept(entry.path)) {
      const { blob } = await readBlob({ fs, gitdir, oid: entry.oid });
      files.push({ path: full, text: Buffer.from(blob).toString('utf8') });
    } else if (entry.type === 'tree' && recurse) {
      files.push(...(await readFolder(gitdir, commit, full, true, accept)));
    }
  }
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
