"""Small helpers over the OS: CPU lists, PR_SET_PDEATHSIG, whole-or-nothing files."""
