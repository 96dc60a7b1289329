// Former flag spellings (src/cli/options.ts, hiddenAlias): each is still accepted, gives the
// command the same option values as its new name, is validated the same way (the error naming
// the spelling the user typed), and is hidden from --help. The program is built, never run: each
// command's action is replaced by one that keeps what it was given.
import type { Command } from 'commander';
import t from 'tap';
import { buildProgram } from '../../src/cli/main.js';

/** [command, former spelling, new spelling, a value, the value it parses into]. */
const ALIASES: Array<[string, string, string, string, unknown]> = [
  ['serve', '--shutdown-delay', '--shutdown-delay-duration', '5s', 5000],
  ['serve', '--its-max-in-flight', '--max-its-requests-inflight', '7', 7],
  ['serve', '--upsync-max-objects', '--max-upsync-objects', '12', 12],
  ['serve', '--upsync-max-object-bytes', '--max-upsync-object-bytes', '2048', 2048],
  ['serve', '--native-code', '--ksview-native', '/opt/bin/ksview-native', '/opt/bin/ksview-native'],
  ['serve', '--protobuf-decoder', '--ksview-protojson', '/opt/bin/ksview-protojson', '/opt/bin/ksview-protojson'],
  ['serve', '--template-expander', '--ksview-gotemplate', '/opt/bin/ksview-gotemplate', '/opt/bin/ksview-gotemplate'],
  ['agent', '--its-max-in-flight', '--max-its-requests-inflight', '9', 9],
];

/** The option values `ksview <command> <args>` would hand its action. */
async function optionsOf(command: string, args: string[]): Promise<Record<string, unknown>> {
  const program = buildProgram(['node', 'ksview']);
  const cmd = program.commands.find((c) => c.name() === command)!;
  let given: Record<string, unknown> | undefined;
  cmd.action((opts: Record<string, unknown>) => { given = opts; });
  await program.parseAsync(['node', 'ksview', command, ...args]);
  return given!;
}

t.test('each former spelling gives the same option values as its new name', async (t) => {
  for (const [command, former, current, value, parsed] of ALIASES) {
    const viaFormer = await optionsOf(command, [former, value]);
    const viaCurrent = await optionsOf(command, [current, value]);
    t.same(viaFormer, viaCurrent, `${command} ${former} ${value} = ${current} ${value}`);
    t.not((await optionsOf(command, []))[attributeOf(command, current)], parsed, `${command}: ${value} is not already the default`);
    t.equal(viaFormer[attributeOf(command, current)], parsed, `${command} ${former} ${value}: ${JSON.stringify(parsed)}`);
    // The `--flag=value` form too.
    t.same(await optionsOf(command, [`${former}=${value}`]), viaCurrent, `${command} ${former}=${value}`);
  }
});

function attributeOf(command: string, flag: string): string {
  const cmd = buildProgram(['node', 'ksview']).commands.find((c) => c.name() === command)!;
  return cmd.options.find((o) => o.long === flag)!.attributeName();
}

t.test('a former spelling is validated as its new name, and the error names what was typed', async (t) => {
  for (const [command, former, value] of [['serve', '--its-max-in-flight', '0'], ['serve', '--shutdown-delay', 'soon'], ['agent', '--its-max-in-flight', 'many']]) {
    await t.rejects(optionsOf(command!, [former!, value!]), { code: 'commander.invalidArgument', message: new RegExp(`${former} <\\w+>' argument '${value}' is invalid`) }, `${command} ${former} ${value}`);
  }
});

t.test('former spellings are hidden from --help; the new names are shown', async (t) => {
  const program = buildProgram(['node', 'ksview']);
  for (const command of ['serve', 'agent']) {
    const cmd = program.commands.find((c) => c.name() === command) as Command;
    const help = cmd.helpInformation();
    for (const [c, former, current] of ALIASES) {
      if (c !== command) continue;
      t.notMatch(help, new RegExp(`${former}\\b(?!-)`), `${command} --help does not show ${former}`);
      t.match(help, current, `${command} --help shows ${current}`);
    }
  }
});
