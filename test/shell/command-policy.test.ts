import { describe, expect, it } from 'vitest';
import { checkCommandLine, DEFAULT_HOST_COMMANDS } from '../../src/shell/command-policy.js';
import { PolicyError } from '../../src/workspace/errors.js';

const allowed = new Set(DEFAULT_HOST_COMMANDS);
/** A program run by path, which the PATH of allowed programs cannot stop: the check must. */
const RUN = '$(/usr/bin/touch pwned)';

describe('host shell allow-list: any expansion that can run a command', () => {
  const refused: Record<string, string[]> = {
    'subscripts bash evaluates at run time (issue lines)': [
      `let 'x[${RUN}]=1'`,
      `[[ -v 'x[${RUN}]' ]]`,
      `declare -a 'x[${RUN}]=1'`,
      `printf -v 'x[${RUN}]' %s a`,
    ],
    'subscripts in other name operands': [
      `test -v 'x[${RUN}]'`,
      `[ -v 'x[${RUN}]' ]`,
      `read 'x[${RUN}]' <<< a`,
      `read -t 1 -a 'x[${RUN}]'`,
      `f() { local 'x[${RUN}]=1'; }; f`,
      `unset 'x[${RUN}]'`,
      `o=-p; wait $o 'x[${RUN}]'`,
    ],
    'command substitution inside arithmetic and subscripts': [
      `echo $(( ${RUN} ))`,
      `(( x[${RUN}] = 1 ))`,
      `for (( i = ${RUN}; i < 1; i++ )); do :; done`,
      `echo \${a[${RUN}]}`,
      'echo ${a[`/usr/bin/touch pwned`]}',
      `a[${RUN}]=1`,
      `a=([${RUN}]=1)`,
      `echo \${x:${RUN}}`,
      `[[ ${RUN} -eq 1 ]]`,
    ],
    'text evaluated as arithmetic (a variable holding text)': [
      `n=$(cat f); echo $((n))`,
      `read n < f; echo $((n + 1))`,
      `v=$(cat f); [[ $v -eq 1 ]]`,
      `i=$(cat f); echo \${a[i]}`,
      `i=$(cat f); a[$i]=1`,
      `x='a[${RUN}]'; (( x ))`,
      `x=abc; x+=def; echo $((x))`,
      `echo 'x[${RUN}]' > /dev/null; echo $(( _ ))`,
      `f() { echo $(( $1 + 1 )); }; f 'x[${RUN}]'`,
      `declare -i n; n=$(cat f)`,
      `for n in $(cat f); do echo $((n)); done`,
    ],
    'indirection, name references and prompt expansion': [
      `r='x[${RUN}]'; echo \${!r}`,
      `declare -n r='x[${RUN}]'; echo $r`,
      `v='${RUN}'; echo \${v@P}`,
    ],
    'PATH and other protected variables, by any route': [
      'printf -v PATH %s /usr/bin; echo | xargs id',
      'declare -n r=PATH; r=/usr/bin; echo | xargs id',
      'local -n r=PATH',
      'typeset -n r=PATH',
      'for PATH in /usr/bin; do echo | xargs id; done',
      'read PATH <<< /usr/bin',
      'read -a PATH <<< /usr/bin',
      ': ${PATH:=/usr/bin}',
      '(( PATH = 1 ))',
      'let PATH=1',
      '{PATH}>f echo',
      'unset PATH',
      'wait -p PATH',
      'o=-v; printf "$o" PATH /usr/bin',
      'f=-n; declare "$f" r=PATH',
      'n=PATH; declare "$n=/usr/bin"',
      'export PATH',
      `PS4='${RUN}'; set -x; :`,
    ],
    'loader and interpreter hooks': [
      'LD_AUDIT=/tmp/a.so ls',
      'export LD_DEBUG=all',
      'LD_PRELOAD=x ls',
      'GCONV_PATH=. ls',
      'GLIBC_TUNABLES=x ls',
      'BASH_ENV=x git status',
      'ENV=x git status',
      'NODE_OPTIONS=--require=x ls',
      'PYTHONSTARTUP=x ls',
      'PERL5OPT=x ls',
      'GIT_SSH_COMMAND=x git fetch',
      'EDITOR=x git commit',
      'HOME=/etc git status',
    ],
  };
  for (const [group, lines] of Object.entries(refused)) {
    it(`refuses ${group}`, () => {
      for (const line of lines) expect(() => checkCommandLine(line, allowed), line).toThrow(PolicyError);
    });
  }

  it('still runs the everyday forms of the same constructs', () => {
    for (const line of [
      'i=0; while [ $i -lt 3 ]; do i=$((i + 1)); done; echo $i',
      'for ((i = 0; i < 3; i++)); do echo $i; done',
      'for i in {1..3} 4; do echo $((i * 2)); done',
      'n=$(wc -l < f); [ "$n" -gt 3 ] && echo big',
      'a=(1 2 3); echo ${a[1]} ${a[@]} ${#a[@]} ${!a[@]} $(( a[0] + 1 ))',
      'declare -A seen; seen[$k]=1; echo ${seen[$k]} ${seen[plain]}',
      'x="hello world"; echo "${x:0:5}" ${#x}',
      'read -r line < f; echo "$line"',
      "printf -v out '%s' x; echo $out",
      '[ -f "$f" ] && [ "$a" = "$b" ] || [ -z "$c" ] || [ "$d" ]',
      '[[ -v x ]] && [[ $x == y* ]]',
      'export FOO=bar GIT_AUTHOR_NAME=me; git status',
      'let i=1 i++; echo $((i)); n=5; m=$n; echo $((m * 2)) $# $?',
      'cat <<EOF\nhi $(date)\nEOF',
      'wait; wait $pid',
    ]) {
      expect(() => checkCommandLine(line, allowed), line).not.toThrow();
    }
  });
});
