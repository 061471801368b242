"""The site a run is simulated on: what a machine is, as a site describes it.

- :mod:`~hpcsched.site.machine`: the nodes, in groups of one kind (count, cores, power model);
- :mod:`~hpcsched.site.partitions`: the partitions over them and the routing of queues to
  them (:class:`~hpcsched.site.partitions.Site`);
- :mod:`~hpcsched.site.platform`: a platform, a machine with its partitions and Slurm's
  settings, from a TOML file or a preset (``platforms/``);
- :mod:`~hpcsched.site.assignment`: the partitions each job of a workload may run in;
- :mod:`~hpcsched.site.slurm`: a Slurm site's own files (``slurm.conf``, associations and
  QOS) and what the policy ``slurm`` takes of them.

Nothing is imported here: the workload readers read Slurm's notations
(:mod:`hpcsched.site.slurm.text`) without loading the rest of the site.
"""
