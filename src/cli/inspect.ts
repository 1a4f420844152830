import { StoreInspector } from './inspect-api.js';
import type { InspectCommand } from './inspect-args.js';
import { startInspectServer } from './inspect-server.js';
import { openStore, storeLabel } from './open-store.js';
import { SessionsCommandError } from './sessions.js';

type Out = Pick<NodeJS.WritableStream, 'write'>;

/**
 * `sessionfs inspect`: serves the page until SIGINT or SIGTERM (then exits 0). The URL goes to stdout, alone
 * on its line, so a script can read it; what the command says besides goes to stderr.
 */
export async function runInspect(command: InspectCommand, out: Out = process.stdout, err: Out = process.stderr): Promise<number> {
  const opened = await openStore(command.store, { create: false });
  if (opened === undefined) throw new SessionsCommandError(`there are no sessions in ${storeLabel(command.store)} yet`);
  const inspector = new StoreInspector(opened.store);
  try {
    if (command.session !== undefined && (await opened.store.head(command.session)) === undefined)
      throw new SessionsCommandError(`no session named ${JSON.stringify(command.session)} in ${storeLabel(command.store)}`);
    const server = await startInspectServer({
      inspector,
      hostDirs: opened.hostDirs,
      ...(command.session === undefined ? {} : { session: command.session }),
    });
    out.write(`${server.url}\n`);
    err.write(`sessionfs: inspecting ${storeLabel(command.store)} on 127.0.0.1:${server.port} (Ctrl-C stops)\n`);
    await new Promise<void>((resolve) => {
      const stop = (): void => {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
        resolve();
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    });
    await server.close();
    return 0;
  } finally {
    await inspector.close();
    await opened.close();
  }
}
