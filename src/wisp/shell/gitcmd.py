"""git: the global options, then a subcommand with its own option table.

Read-only only for a known reading subcommand whose every option is in its table. Options
that read files name them as reads (`blame --contents F`, `-S F`, `--ignore-revs-file F`,
`diff --no-index A B`), `--output F` writes, and what makes git run a program of the
caller's choosing (`-c`, `--config-env`, `--exec-path`, `--ext-diff`, `grep -O`) is inline
code. An unknown subcommand may be an alias, which can run anything. A repository whose
own configuration names a program git runs by itself (`gitrepo`) makes no git command in
it read-only.
"""

from __future__ import annotations

from wisp.shell.call import Call
from wisp.shell.gitrepo import runs_code
from wisp.shell.model import PathUse, UseKind
from wisp.shell.options import Opts, Parsed, long_option, parse, spec
from wisp.shell.paths import join
from wisp.shell.words import Word

_GLOBAL = spec(
    "-C: -c: -p -P -v -h --no-pager --paginate --git-dir= --work-tree= --namespace= "
    "--super-prefix= --config-env= --exec-path=? --html-path --man-path --info-path --bare "
    "--no-replace-objects --literal-pathspecs --glob-pathspecs --noglob-pathspecs "
    "--icase-pathspecs --no-optional-locks --list-cmds= --attr-source= --version --help",
    posix=True)
_GLOBAL_SAFE = frozenset({"-C", "-P", "--no-pager", "--no-replace-objects",
                          "--literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs",
                          "--icase-pathspecs", "--no-optional-locks", "--version",
                          "--html-path", "--man-path", "--info-path", "--list-cmds",
                          "--attr-source"})
# They make git run programs: configuration (core.pager, diff.external, core.fsmonitor,
# alias.*), or git's own commands from another directory.
_GLOBAL_CODE = frozenset({"-c", "--config-env", "--exec-path"})

_DIFF = (
    "-p -u -s -U: -z -W -R -a -b -w -B:: -M:: -C:: -D -l: -S: -G: -O: -I: --patch "
    "--no-patch --unified= --output= --output-indicator-new= --output-indicator-old= "
    "--output-indicator-context= --raw --patch-with-raw --indent-heuristic "
    "--no-indent-heuristic --minimal --patience --histogram --anchored= "
    "--diff-algorithm= --stat=? --stat-width= --stat-name-width= --stat-count= "
    "--compact-summary --numstat --shortstat --dirstat=? --cumulative --dirstat-by-file=? "
    "--summary --patch-with-stat --name-only --name-status --submodule=? --color=? "
    "--no-color --color-moved=? --no-color-moved --color-moved-ws= --no-color-moved-ws "
    "--word-diff=? --word-diff-regex= --color-words=? --no-renames --rename-empty "
    "--no-rename-empty --check --ws-error-highlight= --full-index --binary --abbrev=? "
    "--break-rewrites=? --find-renames=? --find-copies=? --find-copies-harder "
    "--irreversible-delete --diff-filter= --find-object= --pickaxe-all --pickaxe-regex "
    "--relative=? --no-relative --text --ignore-cr-at-eol --ignore-space-at-eol "
    "--ignore-space-change --ignore-all-space --ignore-blank-lines "
    "--ignore-matching-lines= --inter-hunk-context= --function-context --exit-code "
    "--quiet --ext-diff --no-ext-diff --textconv --no-textconv --ignore-submodules=? "
    "--src-prefix= --dst-prefix= --no-prefix --default-prefix --line-prefix= "
    "--ita-invisible-in-index --ita-visible-in-index --skip-to= --rotate-to= "
    "--cached --staged --merge-base --no-index")
_REVS = (
    "-n: -i -E -F -P -g -m -c -t -L: --max-count= --skip= --since= --after= --until= "
    "--before= --since-as-filter= --author= --committer= --grep-reflog= --grep= "
    "--all-match --invert-grep --regexp-ignore-case --basic-regexp --extended-regexp "
    "--fixed-strings --perl-regexp --remove-empty --merges --no-merges --min-parents= "
    "--max-parents= --no-min-parents --no-max-parents --first-parent --exclude-first-parent-only "
    "--not --all --branches=? --tags=? --remotes=? --glob= --exclude= --reflog "
    "--alternate-refs --single-worktree --ignore-missing --bisect --cherry-mark "
    "--cherry-pick --left-only --right-only --cherry --walk-reflogs --merge --boundary "
    "--simplify-by-decoration --show-pulls --full-history --dense --sparse "
    "--simplify-merges --ancestry-path=? --date-order --author-date-order --topo-order "
    "--reverse --no-walk=? --do-walk --pretty=? --format= --abbrev-commit "
    "--no-abbrev-commit --oneline --encoding= --expand-tabs=? --no-expand-tabs "
    "--notes=? --no-notes --show-notes=? --standard-notes --no-standard-notes "
    "--show-signature --relative-date --date= --parents --children --left-right --graph "
    "--show-linear-break=? --follow --decorate=? --no-decorate --decorate-refs= "
    "--decorate-refs-exclude= --clear-decorations --source --mailmap --no-mailmap "
    "--use-mailmap --no-use-mailmap --full-diff --log-size --cc --dd --combined-all-paths "
    "--diff-merges= --no-diff-merges --remerge-diff --root --in-commit-order --count "
    "--objects --objects-edge --unpacked --timestamp --header --stdin --no-filtered")
# Options whose value is a file git reads, by subcommand.
_READS = {"log": frozenset({"-O"}), "show": frozenset({"-O"}), "diff": frozenset({"-O"}),
          "blame": frozenset({"-S", "--contents", "--ignore-revs-file"}),
          "ls-files": frozenset({"-X", "--exclude-from"}), "grep": frozenset({"-f"})}
_WRITES = frozenset({"--output"})
# They run a program: diff.external, or grep's pager.
_CODE = {"log": frozenset({"--ext-diff"}), "show": frozenset({"--ext-diff"}),
         "diff": frozenset({"--ext-diff"}), "grep": frozenset({"-O", "--open-files-in-pager"})}
_NONE = frozenset[str]()


def _sub(text: str, *, numeric: bool = False) -> Opts:
    return spec(text + " --help", numeric=numeric)


_SUBCOMMANDS: dict[str, Opts] = {
    "log": _sub(_DIFF + " " + _REVS, numeric=True),
    "show": _sub(_DIFF + " " + _REVS, numeric=True),
    "diff": _sub(_DIFF),
    "rev-list": _sub(_REVS, numeric=True),
    "status": _sub("-s -b -v -u:: -z --short --branch --show-stash --porcelain=? --long "
                   "--verbose --untracked-files=? --ignore-submodules=? --ignored=? "
                   "--column=? --no-column --ahead-behind --no-ahead-behind --renames "
                   "--no-renames --find-renames=?"),
    "branch": _sub("-a -r -v -l -i --all --remotes --verbose --list --show-current "
                   "--color=? --no-color --abbrev= --no-abbrev --merged= --no-merged= "
                   "--contains= --no-contains= --points-at= --sort= --format= --column=? "
                   "--no-column --ignore-case --omit-empty"),
    "tag": _sub("-l -n:: -i --list --sort= --format= --contains= --no-contains= "
                "--merged= --no-merged= --points-at= --column=? --no-column --ignore-case "
                "--color=? --omit-empty"),
    "rev-parse": _sub("-q --show-toplevel --abbrev-ref=? --verify --quiet --short=? "
                      "--git-dir --git-common-dir --is-inside-work-tree --is-inside-git-dir "
                      "--is-bare-repository --is-shallow-repository --show-prefix "
                      "--show-cdup --symbolic --symbolic-full-name --all --branches=? "
                      "--tags=? --remotes=? --absolute-git-dir --show-superproject-working-tree "
                      "--shared-index-path --sq --local-env-vars --git-path= --since= "
                      "--until= --default= --revs-only --no-revs --flags --no-flags "
                      "--path-format= --show-object-format=? --show-ref-format "
                      "--disambiguate= --exclude= --glob="),
    "ls-files": _sub("-c -d -m -o -i -s -u -k -z -t -v -f -x: -X: --cached --deleted "
                     "--modified --others --ignored --stage --unmerged --killed --full-name "
                     "--directory --no-empty-directory --eol --error-unmatch --exclude= "
                     "--exclude-from= --exclude-per-directory= --exclude-standard "
                     "--recurse-submodules --abbrev=? --debug --deduplicate --sparse "
                     "--format= --with-tree="),
    "ls-tree": _sub("-d -r -t -l -z --long --name-only --name-status --object-only "
                    "--full-name --full-tree --abbrev=? --format="),
    "blame": _sub("-b -f -n -p -c -t -l -s -e -w -L: -M:: -C:: -S: --root --show-stats "
                  "--score-debug --show-name --show-number --porcelain --line-porcelain "
                  "--show-email --incremental --abbrev=? --date= --progress --no-progress "
                  "--color-lines --color-by-age --minimal --reverse= --first-parent "
                  "--contents= --ignore-rev= --ignore-revs-file= --encoding="),
    "describe": _sub("--all --tags --contains --abbrev= --candidates= --exact-match "
                     "--debug --long --match= --exclude= --always --first-parent --dirty=? "
                     "--broken=?"),
    "grep": _sub("-a -i -I -r -w -v -h -H -E -G -P -F -n -l -L -z -o -c -p -W -q -O:: "
                 "-A: -B: -C: -m: -f: -e: --cached --untracked --no-exclude-standard "
                 "--exclude-standard --recurse-submodules --text --textconv --no-textconv "
                 "--ignore-case --max-depth= --recursive --word-regexp --invert-match "
                 "--full-name --extended-regexp --basic-regexp --perl-regexp "
                 "--fixed-strings --line-number --column --files-with-matches --name-only "
                 "--files-without-match --open-files-in-pager=? --null --only-matching "
                 "--count --color=? --no-color --break --heading --show-function "
                 "--function-context --max-count= --threads= --and --or --not --all-match "
                 "--quiet --after-context= --before-context= --context=", numeric=True),
    "show-ref": _sub("-d -s -q --head --tags --heads --branches --dereference --hash=? "
                     "--abbrev=? --verify --exists --quiet"),
    "cat-file": _sub("-t -s -e -p -Z --textconv --filters --batch=? --batch-check=? "
                     "--batch-all-objects --buffer --follow-symlinks --unordered "
                     "--allow-unknown-type --path= --mailmap --use-mailmap"),
    "merge-base": _sub("-a --all --octopus --independent --is-ancestor --fork-point"),
    "remote": _sub("-v --verbose"),
}
# Listing forms only: with a name and no --list these create.
_LISTING = {"branch": frozenset({"-l", "--list"}), "tag": frozenset({"-l", "--list"})}


def git(call: Call) -> None:
    parsed = parse(call.args, _GLOBAL)
    call.unknown_words(parsed.unknown)
    if parsed.has(_GLOBAL_CODE):
        call.hidden_code = True
        call.read_only = False
    if any(flag.name not in _GLOBAL_SAFE for flag in parsed.flags):
        call.read_only = False
    for word in parsed.values({"--git-dir", "--work-tree"}):
        call.read(word, True)
    operands = parsed.operands
    if not operands:
        return
    sub = operands[0].static
    opts = _SUBCOMMANDS.get(sub or "")
    if sub == "stash":
        sub, opts, operands = _stash(operands)
    if sub is None or opts is None:
        call.read_only = False  # writes, or an alias that may run anything
        for word in operands[1:]:
            if not word.display.startswith("-"):
                call.mention(word)
    else:
        _subcommand(call, sub, operands[1:], opts)
    chdirs = parsed.values({"-C"})
    if call.read_only and _repository_runs_code(call, chdirs):
        call.read_only = False
        call.hidden_code = True
    _where(call, chdirs, "read" if call.read_only else "write")


def _repository_runs_code(call: Call, chdirs: list[Word]) -> bool:
    """Whether the repository git works in names a program git would run (`gitrepo`),
    or where it works cannot be known."""
    if call.cwd is None or len(chdirs) > 1:
        return True
    folders: tuple[str, ...] = call.cwd
    if chdirs:
        target = chdirs[0].static
        if target is None:
            return True
        folders = tuple(join(cwd, target) if not target.startswith("/") else target
                        for cwd in call.cwd)
    return any(runs_code(folder) for folder in folders)


def _stash(operands: list[Word]) -> tuple[str | None, Opts | None, list[Word]]:
    """`git stash list` and `git stash show` read; every other form changes the stash."""
    action = operands[1].static if len(operands) > 1 else None
    if action == "list":
        return "log", _SUBCOMMANDS["log"], operands[1:]
    if action == "show":
        return "show", _SUBCOMMANDS["show"], operands[1:]
    return None, None, operands


def _where(call: Call, chdirs: list[Word], kind: UseKind) -> None:
    """The repository git works in, read or written below."""
    if len(chdirs) == 1:
        call.use(chdirs[0], kind, True)
    elif chdirs:
        call.uses.append(PathUse(kind, None, True))
        call.read_only = call.read_only and kind == "read"
    else:
        call.here(kind, True)


def _subcommand(call: Call, sub: str, args: list[Word], opts: Opts) -> None:
    parsed = _parse_git(args, opts)
    call.unknown_words(parsed.unknown)
    for word in parsed.values(_READS.get(sub, _NONE)):
        call.read(word)
    for word in parsed.values(_WRITES):
        call.write(word)
    if parsed.has(_CODE.get(sub, _NONE)):
        call.read_only = False
        call.hidden_code = True
    if sub == "diff":
        # Paths outside the work tree make it `diff --no-index`: files anywhere.
        for word in parsed.operands:
            call.read(word)
    listing = _LISTING.get(sub)
    if listing is not None and parsed.operands and not parsed.has(listing):
        call.read_only = False
    if sub == "remote" and parsed.operands and parsed.operands[0].static != "get-url":
        call.read_only = False


def _parse_git(args: list[Word], opts: Opts) -> Parsed:
    """git's parse-options: getopt's abbreviations, and `--no-X` negating any option X."""
    rewritten = []
    for word in args:
        text = word.static or ""
        name = text.split("=", 1)[0][2:]
        if (text.startswith("--no-") and long_option(name, opts) is None
                and name[3:] in opts.long_names):
            rewritten.append(Word.literal("--help"))  # a negation: harmless
        else:
            rewritten.append(word)
    return parse(rewritten, opts)
