"""JAX's persistent compilation cache: on by the first infer call, in the user cache, with an off switch."""

import os
import subprocess
import sys
import textwrap


def _run(env_updates: dict, cwd=None, stderr: bool = False) -> str:
    script = textwrap.dedent(
        """
        import jax
        import autoreparam
        from autoreparam import compilation_cache
        assert not jax.config.jax_compilation_cache_dir  # importing touches nothing
        print(compilation_cache.ensure(), jax.config.jax_compilation_cache_dir)
        """
    )
    env = {k: v for k, v in os.environ.items() if k not in ("AUTOREPARAM_COMPILATION_CACHE", "AUTOREPARAM_CACHE_DIR")}
    env.update(env_updates)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120, cwd=cwd)
    assert out.returncode == 0, out.stderr[-2000:]
    return (out.stdout.strip(), out.stderr) if stderr else out.stdout.strip()


def test_the_cache_lives_in_the_user_cache_folder(tmp_path):
    out = _run({"AUTOREPARAM_CACHE_DIR": str(tmp_path)})
    assert out == f"True {tmp_path / 'jax'}"
    assert (tmp_path / "jax").is_dir()


def test_the_off_switch(tmp_path):
    assert _run({"AUTOREPARAM_CACHE_DIR": str(tmp_path), "AUTOREPARAM_COMPILATION_CACHE": "0"}) == "False None"
    assert not (tmp_path / "jax").exists()


def test_more_spellings_of_off_a_warning_for_others_and_for_a_cache_that_cannot_be_made(tmp_path):
    # Found in review: "disabled" left the cache on without a word, a relative folder was given to JAX
    # as it was, and a folder that could not be made switched the cache off silently.
    assert _run({"AUTOREPARAM_CACHE_DIR": str(tmp_path), "AUTOREPARAM_COMPILATION_CACHE": "disabled"}) == "False None"
    out, err = _run({"AUTOREPARAM_CACHE_DIR": str(tmp_path), "AUTOREPARAM_COMPILATION_CACHE": "maybe"}, stderr=True)
    assert out == f"True {tmp_path / 'jax'}" and "AUTOREPARAM_COMPILATION_CACHE='maybe' is neither on nor off" in err
    assert _run({"AUTOREPARAM_CACHE_DIR": "rel"}, cwd=tmp_path) == f"True {tmp_path.resolve() / 'rel' / 'jax'}"
    (tmp_path / "a_file").write_text("x")
    out, err = _run({"AUTOREPARAM_CACHE_DIR": str(tmp_path / "a_file")}, stderr=True)
    assert out == "False None" and "the persistent compilation cache is off" in err
