"""For newcomers and teachers: `workbench demo` (:mod:`.demo`) and the guided tour (:mod:`.tour`)."""
