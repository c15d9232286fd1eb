import { apiserverCommand, apiserverUsage } from './apiserver/cli.js';
import { manifestsCommand } from './deploy/manifestsCommand.js';
import { runCommand } from './deploy/runCommand.js';
import { typesCommand } from './deploy/typesCommand.js';
import { replayCommand, replayUsage } from './testing/replay/replayCommand.js';
import { createCommand } from './scaffold/createApiCommand.js';
import { initCommand } from './scaffold/initCommand.js';
import { closest, UsageError, type CliIo } from './util/cli.js';

/**
 * The `rxkube` command: dispatches to its subcommands (`rxkube apiserver`,
 * `rxkube manifests`, `rxkube run`, `rxkube replay`, `rxkube types`,
 * `rxkube init`, `rxkube create`).
 * A program entry like `bin/rxkube.js`, not a part of the library: it may
 * import any part. Failures are exit codes; nothing here calls
 * `process.exit`.
 */

function signals(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve(signal);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

const usage = `usage: rxkube <command> [options]

commands:
  init <dir>           write a new operator project: a custom resource, its controller and tests
  create api <Kind>    add a custom resource and its controller to a project rxkube init made
  apiserver            run the embedded Kubernetes API server
  manifests <module>   print the YAML that deploys a controller definition (or write a Helm chart of it: --helm <dir>)
  run <module>         run a controller definition (the container's start command)
  replay <recording>   replay a recorded run with a reconcile, in virtual time
  types <crd.yaml|->   write TypeScript types for the CustomResourceDefinitions of a file

rxkube <command> --help describes each.

${apiserverUsage}
${replayUsage}`;

const commands = ['apiserver', 'manifests', 'run', 'replay', 'types', 'init', 'create', 'help'];

const defaultIo: CliIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  untilStopped: signals,
};

/** Runs the CLI with `argv` (without node and the script); returns the exit code. */
export async function runCli(argv: string[], io: CliIo = defaultIo): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'apiserver':
        return await apiserverCommand(rest, io);
      case 'manifests':
        return await manifestsCommand(rest, io);
      case 'run':
        return await runCommand(rest, io);
      case 'replay':
        return await replayCommand(rest, io);
      case 'types':
        return await typesCommand(rest, io);
      case 'init':
        return await initCommand(rest, io);
      case 'create':
        return await createCommand(rest, io);
      case undefined:
      case '-h':
      case '--help':
      case 'help':
        io.out(usage);
        return command === undefined ? 2 : 0;
      default: {
        const suggestion = closest(command, commands);
        io.err(`rxkube: unknown command ${JSON.stringify(command)}${suggestion === undefined ? '' : ` (did you mean ${suggestion}?)`}\n\n${usage}`);
        return 2;
      }
    }
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`rxkube ${command}: ${error.message}\n(rxkube ${command} --help lists the options)`);
      return 2;
    }
    io.err(`rxkube: ${(error as Error).message}`);
    return 1;
  }
}
