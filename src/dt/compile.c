/* placeholder, being written */
