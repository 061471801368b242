"""A Slurm site's own files and settings.

- :mod:`~hpcsched.site.slurm.text`: Slurm's notations (durations, whole numbers, hostlists),
  also read by the sacct reader and the advisor; it imports nothing of the site;
- :mod:`~hpcsched.site.slurm.conf_lines`: a ``slurm.conf`` and its ``Include`` files as lines;
  :mod:`~hpcsched.site.slurm.keys`: Slurm 22.05's keys, to name what is not simulated;
- :mod:`~hpcsched.site.slurm.conf`: a ``slurm.conf`` as a platform;
- :mod:`~hpcsched.site.slurm.settings`: its scheduling settings (priority weights, backfill);
- :mod:`~hpcsched.site.slurm.associations`, :mod:`~hpcsched.site.slurm.accounts`: associations
  and QOS (``sacctmgr`` output or TOML);
- :mod:`~hpcsched.site.slurm.policy`: what the policy ``slurm`` takes of a workload on a site;
- :mod:`~hpcsched.site.slurm.used`: what a run says of the settings it ran under.

Nothing is imported here (see :mod:`hpcsched.site`).
"""
